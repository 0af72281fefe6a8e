/*
 * The fields codec/task-encoder.ts writes, as "number localName type" per message: the tests compare
 * them with the generated descriptors, so a proto change that the encoder misses fails a test.
 */

/** Every field task-encoder.ts writes, as "number localName type": the test compares it with the descriptors. */
export const ENCODED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.Task": [
    "1 id string",
    "2 contextId string",
    "3 status lf.a2a.v1.TaskStatus",
    "4 artifacts repeated lf.a2a.v1.Artifact",
    "5 history repeated lf.a2a.v1.Message",
    "6 metadata google.protobuf.Struct",
  ],
  "lf.a2a.v1.TaskStatus": ["1 state enum lf.a2a.v1.TaskState", "2 message lf.a2a.v1.Message", "3 timestamp google.protobuf.Timestamp"],
  "lf.a2a.v1.Message": [
    "1 messageId string",
    "2 contextId string",
    "3 taskId string",
    "4 role enum lf.a2a.v1.Role",
    "5 parts repeated lf.a2a.v1.Part",
    "6 metadata google.protobuf.Struct",
    "7 extensions repeated string",
    "8 referenceTaskIds repeated string",
  ],
  "lf.a2a.v1.Part": [
    "1 text string oneof content",
    "2 raw bytes oneof content",
    "3 url string oneof content",
    "4 data google.protobuf.Value oneof content",
    "5 metadata google.protobuf.Struct",
    "6 filename string",
    "7 mediaType string",
  ],
  "lf.a2a.v1.Artifact": [
    "1 artifactId string",
    "2 name string",
    "3 description string",
    "4 parts repeated lf.a2a.v1.Part",
    "5 metadata google.protobuf.Struct",
    "6 extensions repeated string",
  ],
  "google.protobuf.Timestamp": ["1 seconds int64", "2 nanos int32"],
  "google.protobuf.Struct": ["1 fields map<string, google.protobuf.Value>"],
  "google.protobuf.Value": [
    "1 nullValue enum google.protobuf.NullValue oneof kind",
    "2 numberValue double oneof kind",
    "3 stringValue string oneof kind",
    "4 boolValue bool oneof kind",
    "5 structValue google.protobuf.Struct oneof kind",
    "6 listValue google.protobuf.ListValue oneof kind",
  ],
  "google.protobuf.ListValue": ["1 values repeated google.protobuf.Value"],
};

/** The fields of the two stream update events, as ENCODED_FIELDS lists those of the Task tree. */
export const ENCODED_EVENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.TaskStatusUpdateEvent": ["1 taskId string", "2 contextId string", "3 status lf.a2a.v1.TaskStatus", "4 metadata google.protobuf.Struct"],
  "lf.a2a.v1.TaskArtifactUpdateEvent": [
    "1 taskId string",
    "2 contextId string",
    "3 artifact lf.a2a.v1.Artifact",
    "4 append bool",
    "5 lastChunk bool",
    "6 metadata google.protobuf.Struct",
  ],
};
