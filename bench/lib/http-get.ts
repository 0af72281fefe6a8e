import { get } from "node:http";

export interface GetResult {
  readonly ok: boolean;
  readonly text: string;
}

/** A GET over fetch's pool: the connection stays open until the server's keep-alive timeout (5 s). */
export async function getKeptAlive(url: string): Promise<GetResult> {
  const response = await fetch(url);
  return { ok: response.ok, text: await response.text() };
}

/** A GET on a connection of its own, closed after the response (`Connection: close`). */
export function getClosing(url: string): Promise<GetResult> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ ok: response.statusCode === 200, text }));
    }).on("error", reject);
  });
}
