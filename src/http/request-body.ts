import type { IncomingMessage } from "node:http";

/** The request body was larger than allowed (R-BIND-32: 413 before parsing). */
export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the request body is larger than ${limitBytes} bytes (A2A_MAX_MESSAGE_BYTES)`);
  }
}

/**
 * Reads a request body of at most `maxBytes`: a declared Content-Length over it is refused before
 * a byte is read, and a body that grows past it while streaming stops being read at once.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(new BodyTooLargeError(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
