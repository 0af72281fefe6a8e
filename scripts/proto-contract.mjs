// The wire contract of one protobuf package as a set of lines, one per fact a peer depends on:
// each message field (number, name, JSON name, type, label, oneof, options such as
// field_behavior), each enum value, each rpc (types, streaming, options such as its HTTP
// binding) and the file's options. Input: a FileDescriptorProto in ProtoJSON (a `buf build`
// JSON image's file, or protobuf-es `toJson` with the extensions' registry). Comments and
// layout are free; two files with the same lines are the same contract.

/** The contract lines of `file`, sorted. */
export function contractLines(file) {
  const lines = [`file ${file.name}: package ${file.package}`];
  if (file.options) lines.push(`file options ${canonical(file.options)}`);
  const scope = `.${file.package}`;
  for (const message of file.messageType ?? []) messageLines(message, scope, lines);
  for (const e of file.enumType ?? []) enumLines(e, scope, lines);
  for (const service of file.service ?? []) {
    lines.push(`service ${scope}.${service.name}${service.options ? ` options ${canonical(service.options)}` : ""}`);
    for (const m of service.method ?? []) {
      const streams = `${m.clientStreaming ? "stream " : ""}${m.inputType} -> ${m.serverStreaming ? "stream " : ""}${m.outputType}`;
      lines.push(`rpc ${scope}.${service.name}.${m.name}: ${streams}${m.options ? ` options ${canonical(m.options)}` : ""}`);
    }
  }
  return lines.sort();
}

function messageLines(message, scope, lines) {
  const name = `${scope}.${message.name}`;
  const oneofs = (message.oneofDecl ?? []).map((o) => o.name);
  lines.push(`message ${name}${message.options ? ` options ${canonical(message.options)}` : ""}`);
  for (const f of message.field ?? []) {
    const facts = [
      `${f.label} ${f.type}${f.typeName ? ` ${f.typeName}` : ""}`,
      `json ${f.jsonName}`,
      f.proto3Optional ? "proto3_optional" : "",
      f.oneofIndex !== undefined && !f.proto3Optional ? `oneof ${oneofs[f.oneofIndex]}` : "",
      f.options ? `options ${canonical(f.options)}` : "",
    ];
    lines.push(`field ${name} #${f.number} ${f.name}: ${facts.filter(Boolean).join(", ")}`);
  }
  for (const nested of message.nestedType ?? []) messageLines(nested, name, lines);
  for (const e of message.enumType ?? []) enumLines(e, name, lines);
}

function enumLines(e, scope, lines) {
  for (const v of e.value ?? []) lines.push(`enum ${scope}.${e.name} ${v.name} = ${v.number ?? 0}`);
}

/** JSON with sorted keys, so equal options print equally. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What `want` has that `got` lacks ("- ") and the reverse ("+ "). */
export function contractDiff(want, got) {
  const wanted = new Set(want);
  const found = new Set(got);
  return [...want.filter((l) => !found.has(l)).map((l) => `- ${l}`), ...got.filter((l) => !wanted.has(l)).map((l) => `+ ${l}`)];
}

/** How much a contract covers, for a verdict that shows the check compared something. */
export function contractSize(lines) {
  const count = (kind) => lines.filter((l) => l.startsWith(`${kind} `)).length;
  return { messages: count("message"), fields: count("field"), enumValues: count("enum"), rpcs: count("rpc") };
}
