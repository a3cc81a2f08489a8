/**
 * Chakra execution traces (MLCommons Chakra, the input of ASTRA-sim's workload layer and of its
 * collective API) written from a Program and read back: one `<prefix>.<rank>.et` per rank, each a
 * stream of length-delimited protobuf messages (a GlobalMetadata, then one Node per operation), as
 * Chakra's protoio writes them. Encoded and decoded by protobufjs from the schema below, which
 * follows Chakra's schema/protobuf/et_def.proto (package ChakraProtoMsg) field for field for the
 * messages cclab writes.
 *
 * Nodes: COMM_SEND_NODE and COMM_RECV_NODE with comm_src, comm_dst, comm_size (bytes) and
 * comm_tag, as ASTRA-sim's feeder reads them; COMP_NODE for local work, its time in
 * duration_micros (rounded up) and exactly in a `duration_ns` attribute, its bytes in
 * tensor_size. data_deps are the plan's dependencies; node ids are the operation's index.
 *
 * May import: core, export/program.
 */
import protobuf from "protobufjs";
import { AlgorithmFileError } from "../core/errors.js";
import type { Program, ProgramOp } from "./program.js";

export const CHAKRA_SCHEMA_VERSION = "0.0.4";

const SCHEMA = `
syntax = "proto3";
package ChakraProtoMsg;
message AttributeProto {
  string name = 1;
  string doc_string = 2;
  oneof value {
    double double_val = 3; DoubleList double_list = 4; float float_val = 5; FloatList float_list = 6;
    int32 int32_val = 7; Int32List int32_list = 8; int64 int64_val = 9; Int64List int64_list = 10;
    uint32 uint32_val = 11; Uint32List uint32_list = 12; uint64 uint64_val = 13; Uint64List uint64_list = 14;
    sint32 sint32_val = 15; Sint32List sint32_list = 16; sint64 sint64_val = 17; Sint64List sint64_list = 18;
    fixed32 fixed32_val = 19; Fixed32List fixed32_list = 20; fixed64 fixed64_val = 21; Fixed64List fixed64_list = 22;
    sfixed32 sfixed32_val = 23; Sfixed32List sfixed32_list = 24; sfixed64 sfixed64_val = 25; Sfixed64List sfixed64_list = 26;
    bool bool_val = 27; BoolList bool_list = 28; string string_val = 29; StringList string_list = 30;
    bytes bytes_val = 31; BytesList bytes_list = 32;
  }
}
message DoubleList { repeated double values = 1; }
message FloatList { repeated float values = 1; }
message Int32List { repeated int32 values = 1; }
message Int64List { repeated int64 values = 1; }
message Uint32List { repeated uint32 values = 1; }
message Uint64List { repeated uint64 values = 1; }
message Sint32List { repeated sint32 values = 1; }
message Sint64List { repeated sint64 values = 1; }
message Fixed32List { repeated fixed32 values = 1; }
message Fixed64List { repeated fixed64 values = 1; }
message Sfixed32List { repeated sfixed32 values = 1; }
message Sfixed64List { repeated sfixed64 values = 1; }
message BoolList { repeated bool values = 1; }
message StringList { repeated string values = 1; }
message BytesList { repeated bytes values = 1; }
message GlobalMetadata {
  string version = 1;
  repeated AttributeProto attr = 2;
}
enum NodeType {
  INVALID_NODE = 0; METADATA_NODE = 1; MEM_LOAD_NODE = 2; MEM_STORE_NODE = 3;
  COMP_NODE = 4; COMM_SEND_NODE = 5; COMM_RECV_NODE = 6; COMM_COLL_NODE = 7;
}
message Node {
  uint64 id = 1;
  string name = 2;
  NodeType type = 3;
  repeated uint64 ctrl_deps = 4;
  repeated uint64 data_deps = 5;
  uint64 start_time_micros = 6;
  uint64 duration_micros = 7;
  IOInfo inputs = 8;
  IOInfo outputs = 9;
  repeated AttributeProto attr = 10;
}
message IOInfo {
  string values = 1;
  string shapes = 2;
  string types = 3;
}
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const GlobalMetadata = root.lookupType("ChakraProtoMsg.GlobalMetadata");
const NodeMsg = root.lookupType("ChakraProtoMsg.Node");
const NodeType = root.lookupEnum("ChakraProtoMsg.NodeType").values as Record<string, number>;

type Attr = { name: string } & Record<string, unknown>;

function nodeOf(o: ProgramOp, id: number, rank: number): Record<string, unknown> {
  const deps = [...new Set(o.deps)].sort((a, b) => a - b);
  if (o.kind === "calc") {
    return {
      id,
      name: `${o.source} ${o.bytes} B`,
      type: NodeType.COMP_NODE,
      data_deps: deps,
      duration_micros: Math.ceil(o.ns / 1000),
      attr: [
        { name: "is_cpu_op", bool_val: false },
        { name: "tensor_size", uint64_val: o.bytes },
        { name: "duration_ns", int64_val: o.ns },
      ] satisfies Attr[],
    };
  }
  const send = o.kind === "send";
  return {
    id,
    name: send ? `send ${o.bytes} B to ${o.peer} tag ${o.tag}` : `recv ${o.bytes} B from ${o.peer} tag ${o.tag}`,
    type: send ? NodeType.COMM_SEND_NODE : NodeType.COMM_RECV_NODE,
    data_deps: deps,
    attr: [
      { name: "is_cpu_op", bool_val: false },
      { name: "comm_src", int32_val: send ? rank : o.peer },
      { name: "comm_dst", int32_val: send ? o.peer : rank },
      { name: "comm_size", int64_val: o.bytes },
      { name: "comm_tag", int32_val: o.tag },
    ] satisfies Attr[],
  };
}

/** Rank r's trace: the metadata, then its operations as nodes, each length-delimited. */
export function toChakra(p: Program, rank: number): Uint8Array {
  const parts: Uint8Array[] = [];
  const meta = {
    version: CHAKRA_SCHEMA_VERSION,
    attr: [
      { name: "schema", string_val: `cclab ${p.collective}/${p.algorithm}` },
      { name: "num_ranks", int64_val: p.nranks },
      { name: "rank", int64_val: rank },
    ],
  };
  parts.push(GlobalMetadata.encodeDelimited(GlobalMetadata.fromObject(meta)).finish());
  const ops = p.ranks[rank] as readonly ProgramOp[];
  for (let i = 0; i < ops.length; i++) {
    parts.push(NodeMsg.encodeDelimited(NodeMsg.fromObject(nodeOf(ops[i] as ProgramOp, i, rank))).finish());
  }
  return Buffer.concat(parts);
}

/** One rank's trace read back: its metadata's rank count and its operations. */
export function parseChakra(bytes: Uint8Array, file: string, rank: number): { nranks: number; ops: ProgramOp[] } {
  const reader = protobuf.Reader.create(bytes);
  let meta: Record<string, unknown>;
  try {
    meta = GlobalMetadata.toObject(GlobalMetadata.decodeDelimited(reader), { longs: Number });
  } catch (e) {
    throw new AlgorithmFileError(
      `${file}: not a Chakra trace (its first message is no GlobalMetadata: ${(e as Error).message})`,
    );
  }
  const metaAttrs = attrs((meta.attr as Attr[] | undefined) ?? []);
  const nranks = Number(metaAttrs.get("num_ranks") ?? 0);
  const ops: ProgramOp[] = [];
  while (reader.pos < reader.len) {
    let node: Record<string, unknown>;
    try {
      node = NodeMsg.toObject(NodeMsg.decodeDelimited(reader), { longs: Number, enums: Number, defaults: true });
    } catch (e) {
      throw new AlgorithmFileError(`${file}: node ${ops.length + 1} cannot be decoded: ${(e as Error).message}`);
    }
    const id = Number(node.id);
    if (id !== ops.length)
      throw new AlgorithmFileError(`${file}: node ids run 0, 1, ...: node ${ops.length} has id ${id}`);
    const a = attrs((node.attr as Attr[] | undefined) ?? []);
    const deps = ((node.data_deps as number[] | undefined) ?? []).map(Number);
    for (const d of deps) {
      if (!(d >= 0 && d < id))
        throw new AlgorithmFileError(`${file}: node ${id} depends on node ${d}, which is not before it`);
    }
    const type = Number(node.type);
    if (type === NodeType.COMP_NODE) {
      const ns = Number(a.get("duration_ns") ?? Number(node.duration_micros) * 1000);
      const tensorBytes = Number(a.get("tensor_size") ?? 0);
      ops.push({ kind: "calc", source: ns > 0 ? "reduce" : "copy", peer: -1, tag: -1, bytes: tensorBytes, ns, deps });
      continue;
    }
    if (type !== NodeType.COMM_SEND_NODE && type !== NodeType.COMM_RECV_NODE)
      throw new AlgorithmFileError(`${file}: node ${id} has type ${type}, not a send, a receive or a computation`);
    const send = type === NodeType.COMM_SEND_NODE;
    const src = Number(a.get("comm_src"));
    const dst = Number(a.get("comm_dst"));
    if ((send ? src : dst) !== rank)
      throw new AlgorithmFileError(`${file}: node ${id} is rank ${send ? src : dst}'s, in rank ${rank}'s trace`);
    ops.push({
      kind: send ? "send" : "recv",
      source: send ? "send" : "recv",
      peer: send ? dst : src,
      tag: Number(a.get("comm_tag")),
      bytes: Number(a.get("comm_size")),
      ns: 0,
      deps,
    });
  }
  return { nranks, ops };
}

function attrs(list: readonly Attr[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const a of list) {
    const { name, doc_string: _doc, value: _oneof, ...rest } = a as Attr & { doc_string?: string; value?: string };
    const v = Object.values(rest).find((x) => x !== undefined);
    m.set(name, v);
  }
  return m;
}
