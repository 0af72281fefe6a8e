import { startHttpThread, type DocumentSource, type HttpThread } from "../../src/protocol/http-thread.js";

// The HTTP listener's own thread, without a card: documents made on this thread, per request.
let listener: HttpThread;
let base: string;
let made = 0;
beforeAll(async () => {
  listener = await startHttpThread({
    host: "127.0.0.1",
    port: 0,
    documents: new Map<string, DocumentSource>([
      ["/doc", async () => ({ status: 200, contentType: "text/plain; version=0.0.4", body: `document ${++made}\n`, headers: { "Cache-Control": "no-store" } })],
      ["/bytes", async () => ({ status: 200, contentType: "application/octet-stream", body: new Uint8Array([0, 1, 2, 255]) })],
      [
        "/throws",
        () => {
          throw new Error("thrown at once");
        },
      ],
      [
        "/broken",
        async () => {
          throw new Error("the registry failed");
        },
      ],
    ]),
    notFound: "not found; the document is at /doc\n",
  });
  base = `http://127.0.0.1:${listener.port}`;
});
afterAll(() => listener.close());

describe("HTTP listener thread", () => {
  test("a GET is answered with the document this thread makes for that request", async () => {
    const first = await fetch(`${base}/doc`);
    const second = await fetch(`${base}/doc`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/plain; version=0.0.4");
    expect(first.headers.get("cache-control")).toBe("no-store");
    const [a, b] = [await first.text(), await second.text()];
    expect(a).toMatch(/^document \d+\n$/);
    expect(Number(b.match(/\d+/)![0])).toBe(Number(a.match(/\d+/)![0]) + 1);
  });

  test("bytes come through unchanged, with their length", async () => {
    const res = await fetch(`${base}/bytes`);
    expect(res.headers.get("content-length")).toBe("4");
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([0, 1, 2, 255]);
  });

  test("HEAD has the headers and no body; other methods get 405 with Allow", async () => {
    const head = await fetch(`${base}/doc`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(0);
    expect(await head.text()).toBe("");
    const post = await fetch(`${base}/doc`, { method: "POST", body: "x" });
    expect({ status: post.status, allow: post.headers.get("allow") }).toEqual({ status: 405, allow: "GET, HEAD" });
  });

  test("a document that fails is a 500 naming the path, and the listener goes on", async () => {
    const res = await fetch(`${base}/broken`);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("could not make /broken: the registry failed\n");
    const thrown = await fetch(`${base}/throws`);
    expect({ status: thrown.status, text: await thrown.text() }).toEqual({ status: 500, text: "could not make /throws: thrown at once\n" });
    expect((await fetch(`${base}/doc`)).status).toBe(200);
  });

  test("another path gets the listener's 404 text", async () => {
    const res = await fetch(`${base}/elsewhere`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("not found; the document is at /doc\n");
  });

  test("a port in use fails with the listen error, and close() ends the listener", async () => {
    await expect(startHttpThread({ host: "127.0.0.1", port: listener.port })).rejects.toThrow(/EADDRINUSE/);
    const other = await startHttpThread({
      host: "127.0.0.1",
      port: 0,
      documents: new Map([["/x", async () => ({ status: 200, contentType: "text/plain", body: "x" })]]),
    });
    expect(await (await fetch(`http://127.0.0.1:${other.port}/x`)).text()).toBe("x");
    await Promise.all([other.close(), other.close()]); // a second close waits for the first
    await expect(fetch(`http://127.0.0.1:${other.port}/x`)).rejects.toThrow();
  });
});
