import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse_ServingStatus,
} from "../../gen/es/grpc/health/v1/health_pb.js";
import { ConnectionError } from "./exit-codes.js";
import type { A2ATransport, In, Out, ResponseStream, StreamNames, UnaryNames } from "./transport.js";

/**
 * A grpc-js client for any generated service, typed by protoc-gen-es's GenService: unary
 * calls return promises, server streams are async iterables whose `cancel()` ends the call
 * (not the task). Every call carries the same metadata (a2a-version, credentials).
 */

export interface A2AClientOptions {
  readonly address: string;
  readonly credentials: grpc.ChannelCredentials;
  readonly metadata: grpc.Metadata;
  /** Deadline of unary calls, ms (streams have none: they live as long as the task). */
  readonly timeoutMs?: number;
}

/** The gRPC binding: cancel() of a stream makes the server see CANCELLED. */
export class A2AClient implements A2ATransport {
  readonly binding = "grpc" as const;
  private readonly client: grpc.Client;

  constructor(private readonly options: A2AClientOptions) {
    this.client = new grpc.Client(options.address, options.credentials, { "grpc.max_receive_message_length": 64 * 1024 * 1024 });
  }

  /**
   * Waits for the channel to connect, so that a missing server is a connection error, not
   * a call error. Fails at the first failed attempt (a refused connection, a TLS error)
   * rather than retrying with backoff until the deadline, as grpc-js's waitForReady does.
   */
  async connect(timeoutMs = 10_000): Promise<void> {
    const channel = this.client.getChannel();
    const deadline = Date.now() + timeoutMs;
    const fail = (why: string) => new ConnectionError(`cannot connect to ${this.options.address}: ${why}`);
    for (;;) {
      const state = channel.getConnectivityState(true);
      if (state === grpc.connectivityState.READY) return;
      if (state === grpc.connectivityState.TRANSIENT_FAILURE) throw fail("connection failed (is the server running, and TLS as it expects?)");
      if (state === grpc.connectivityState.SHUTDOWN) throw fail("the channel was closed");
      await new Promise<void>((resolve, reject) =>
        channel.watchConnectivityState(state, deadline, (err) => (err ? reject(fail(`no connection within ${timeoutMs} ms`)) : resolve())),
      );
    }
  }

  unary<K extends UnaryNames>(name: K, init: MessageInitShape<In<K>>): Promise<Out<K>> {
    const method = A2AService.method[name];
    const input = method.input as DescMessage;
    const output = method.output as DescMessage;
    const options: grpc.CallOptions = this.options.timeoutMs ? { deadline: Date.now() + this.options.timeoutMs } : {};
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        path(method.name),
        (m: object) => Buffer.from(toBinary(input, m as never)),
        (b: Buffer) => fromBinary(output, b),
        create(input, init as never),
        this.options.metadata.clone(),
        options,
        (err, value) => (err ? reject(err) : resolve(value as unknown as Out<K>)),
      );
    });
  }

  stream<K extends StreamNames>(name: K, init: MessageInitShape<In<K>>): ResponseStream<Out<K>> {
    const method = A2AService.method[name];
    const input = method.input as DescMessage;
    const output = method.output as DescMessage;
    const call = this.client.makeServerStreamRequest(
      path(method.name),
      (m: object) => Buffer.from(toBinary(input, m as never)),
      (b: Buffer) => fromBinary(output, b),
      create(input, init as never),
      this.options.metadata.clone(),
      {},
    );
    let canceled = false;
    const iterate = async function* (): AsyncGenerator<Out<K>> {
      try {
        for await (const message of call) yield message as Out<K>;
      } catch (e) {
        // Our own cancel ends the stream quietly.
        if (canceled && (e as grpc.ServiceError).code === grpc.status.CANCELLED) return;
        throw e;
      }
    };
    return {
      [Symbol.asyncIterator]: iterate,
      cancel() {
        canceled = true;
        call.cancel();
      },
    };
  }

  /** grpc.health.v1.Health/Check of `service` ("" is the server as a whole). */
  health(service: string): Promise<HealthCheckResponse_ServingStatus> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        `/${Health.typeName}/${Health.method.check.name}`,
        (m: HealthCheckRequest) => Buffer.from(toBinary(HealthCheckRequestSchema, m)),
        (b: Buffer) => fromBinary(HealthCheckResponseSchema, b),
        create(HealthCheckRequestSchema, { service }),
        // The credentials too: a server may close health to anonymous callers (A2A_AUTH_OPEN_SERVICES).
        this.options.metadata.clone(),
        { deadline: Date.now() + (this.options.timeoutMs ?? 5000) },
        (err, value) => (err ? reject(err) : resolve(value!.status)),
      );
    });
  }

  close(): void {
    this.client.close();
  }
}

function path(methodName: string): string {
  return `/${A2AService.typeName}/${methodName}`;
}
