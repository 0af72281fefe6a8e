import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A key that does not belong to serverCert. */
  readonly otherKey: string;
  /** Deletes the directory with every key in it. */
  remove(): void;
}

/** A throwaway CA with a server certificate for 127.0.0.1/localhost and a client certificate (openssl, EC P-256, 1 day). */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "a2a-pki-"));
  const p = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const key = (name: string) => ssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p(name));
  key("ca.key");
  ssl("req", "-x509", "-new", "-key", p("ca.key"), "-subj", "/CN=a2a test CA", "-days", "1", "-out", p("ca.pem"));
  const issue = (name: string, subject: string, ext: string) => {
    key(`${name}.key`);
    ssl("req", "-new", "-key", p(`${name}.key`), "-subj", subject, "-out", p(`${name}.csr`));
    writeFileSync(p(`${name}.ext`), ext);
    ssl(
      "x509",
      "-req",
      "-in",
      p(`${name}.csr`),
      "-CA",
      p("ca.pem"),
      "-CAkey",
      p("ca.key"),
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      p(`${name}.ext`),
      "-out",
      p(`${name}.pem`),
    );
  };
  issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  issue("client", "/CN=a2a test client", "extendedKeyUsage=clientAuth\n");
  key("other.key");
  return {
    dir,
    caCert: p("ca.pem"),
    serverCert: p("server.pem"),
    serverKey: p("server.key"),
    clientCert: p("client.pem"),
    clientKey: p("client.key"),
    otherKey: p("other.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
