import type * as grpc from "@grpc/grpc-js";
import type { A2AServiceClient, SendMessageRequest, StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";

export interface StreamResult {
  readonly events: StreamResponse[];
  readonly error?: grpc.ServiceError;
}

/** A server stream read to its end: every event and the error it ended with, if any. */
export function readStream(stream: grpc.ClientReadableStream<StreamResponse>): { result: Promise<StreamResult>; events: StreamResponse[]; cancel(): void } {
  const events: StreamResponse[] = [];
  const result = new Promise<StreamResult>((resolve) => {
    stream.on("data", (event: StreamResponse) => events.push(event));
    stream.on("error", (error: grpc.ServiceError) => resolve({ events, error }));
    stream.on("end", () => resolve({ events }));
  });
  return { result, events, cancel: () => stream.cancel() };
}

export const streamSend = (client: A2AServiceClient, request: SendMessageRequest, md: grpc.Metadata) => readStream(client.sendStreamingMessage(request, md));
export const subscribe = (client: A2AServiceClient, id: string, md: grpc.Metadata) => readStream(client.subscribeToTask({ tenant: "", id }, md));
