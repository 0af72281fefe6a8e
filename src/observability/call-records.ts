import type * as grpc from "@grpc/grpc-js";

/*
 * TEMPORARY: the shapes of the call seam (#20's src/protocol/call-observer.ts: CallStart,
 * CallEnded, CallObserver) that the metrics and tracing observers use, until that seam is merged;
 * then these give way to imports of the real types.
 */
export interface CallStartRecord {
  readonly service: string;
  readonly method: string;
  readonly streaming: boolean;
  readonly metadata: grpc.Metadata;
  readonly peer: string;
}

export interface CallEndedRecord extends CallStartRecord {
  readonly code: grpc.status;
  readonly details: string | undefined;
  readonly durationMs: number;
  readonly principal: string | undefined;
  readonly taskId: string | undefined;
}

export interface CallObserverHooks<S = unknown> {
  started?(call: CallStartRecord): S;
  around?<T>(call: CallStartRecord, state: S, run: () => T): T;
  ended?(call: CallEndedRecord, state: S): void;
}
