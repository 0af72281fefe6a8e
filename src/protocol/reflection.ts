import { toBinary, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { ReflectionService } from "@grpc/reflection";

/**
 * Server reflection (v1 and v1alpha) from the descriptors protoc-gen-es embeds in the
 * generated code. Each file goes out as its own FileDescriptorProto with its dependency
 * list intact, so strict clients (buf curl, grpcurl) can resolve every type. proto-loader
 * definitions would merge files and lose those lists.
 */

/** Serialized FileDescriptorProtos of these files and everything they import, dependencies first, each once. */
export function fileDescriptorProtos(files: readonly DescFile[]): Buffer[] {
  const seen = new Set<string>();
  const out: Buffer[] = [];
  const visit = (file: DescFile) => {
    if (seen.has(file.name)) return;
    seen.add(file.name);
    file.dependencies.forEach(visit);
    const bytes = toBinary(FileDescriptorProtoSchema, file.proto);
    out.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  };
  files.forEach(visit);
  return out;
}

/** The shape @grpc/reflection reads: service name -> { fileDescriptorProtos }. */
type ReflectionPackage = ConstructorParameters<typeof ReflectionService>[0];

/**
 * A reflection service describing these services, each given with the file that declares it,
 * and the message types of `typeFiles` too: the error detail types (google.rpc.ErrorInfo,
 * BadRequest, ...) that statuses carry as Any, which clients resolve through reflection to
 * decode them. Files that declare no service are indexed but not listed by list_services.
 */
export function createReflectionService(
  services: ReadonlyArray<{ readonly typeName: string; readonly file: DescFile }>,
  typeFiles: readonly DescFile[] = [],
): ReflectionService {
  const pkg: Record<string, { fileDescriptorProtos: Buffer[] }> = {};
  for (const { typeName, file } of services) pkg[typeName] = { fileDescriptorProtos: fileDescriptorProtos([file]) };
  for (const file of typeFiles) pkg[file.name] = { fileDescriptorProtos: fileDescriptorProtos([file]) };
  return new ReflectionService(pkg as unknown as ReflectionPackage);
}
