#!/usr/bin/env node
// Copies the third-party .proto files that a2a.proto and the service need from
// npm packages into third_party/ (git-ignored), so buf can build offline without
// committing anyone else's files. Runs on `npm install` / `npm ci` (prepare).
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(root, "third_party");
const googleapis = join(root, "node_modules", "google-proto-files");
const health = join(root, "node_modules", "grpc-health-check", "proto");

const files = [
  [googleapis, "google/api/annotations.proto"],
  [googleapis, "google/api/client.proto"],
  [googleapis, "google/api/field_behavior.proto"],
  [googleapis, "google/api/http.proto"],
  [googleapis, "google/api/launch_stage.proto"],
  [googleapis, "google/rpc/status.proto"],
  [googleapis, "google/rpc/error_details.proto"],
];

rmSync(target, { recursive: true, force: true });
for (const [base, file] of files) {
  mkdirSync(dirname(join(target, file)), { recursive: true });
  cpSync(join(base, file), join(target, file));
}
// grpc-health-check ships health.proto without the grpc/ prefix of its package path.
mkdirSync(join(target, "grpc/health/v1"), { recursive: true });
cpSync(join(health, "health/v1/health.proto"), join(target, "grpc/health/v1/health.proto"));
