// mcap_zstd.mjs IN OUT LEVEL - the MCAP peer of the compression benchmark
// (bench/compress/run.sh, issue #28): every message of IN (an uncompressed
// MCAP file, `dssm export --compression none` of a recording) written again
// by the npm @mcap/core writer into OUT, its chunks (@mcap/core's default
// size, 1 MiB) compressed with zstd at LEVEL by @foxglove/wasm-zstd, the
// zstd build Foxglove's own tools write with; LEVEL "none" writes them
// uncompressed. Prints "seconds messages bytes_out".
// NODE_PATH: a node_modules with @mcap/core, fzstd and lz4js (as
// tests/bridge/mcap_open.mjs); ZSTD_NODE_PATH: one with @foxglove/wasm-zstd.
import { createRequire } from "node:module";
import { closeSync, openSync, writeSync } from "node:fs";
import { openIndexed } from "../../tests/bridge/mcap_open.mjs";

const require = createRequire(process.env.NODE_PATH + "/");
const { McapWriter } = require("@mcap/core");

const [input, output, level] = process.argv.slice(2);
if (level === undefined) {
  console.error("usage: mcap_zstd.mjs IN OUT LEVEL|none");
  process.exit(2);
}
let compressChunk;
if (level !== "none") {
  const zstd = createRequire(process.env.ZSTD_NODE_PATH + "/")("@foxglove/wasm-zstd");
  await zstd.isLoaded;
  const n = Number(level);
  compressChunk = (data) => ({ compression: "zstd", compressedData: zstd.compress(data, n) });
}

// written as it goes: a recording of hundreds of MB is not held in memory
const fd = openSync(output, "w");
let pos = 0n;
const writable = {
  position: () => pos,
  write: async (buf) => {
    writeSync(fd, buf);
    pos += BigInt(buf.byteLength);
  },
};
const t0 = process.hrtime.bigint();
const { reader, close } = await openIndexed(input);
const w = new McapWriter({ writable, compressChunk });
await w.start({ profile: reader.header.profile, library: "dssm compression benchmark (@mcap/core)" });
const schemaIds = new Map([[0, 0]]);
for (const [id, s] of reader.schemasById)
  schemaIds.set(id, await w.registerSchema({ name: s.name, encoding: s.encoding, data: s.data }));
const channelIds = new Map();
for (const [id, c] of reader.channelsById)
  channelIds.set(id, await w.registerChannel({ topic: c.topic, schemaId: schemaIds.get(c.schemaId),
                                               messageEncoding: c.messageEncoding, metadata: c.metadata }));
let count = 0;
for await (const m of reader.readMessages()) {
  await w.addMessage({ channelId: channelIds.get(m.channelId), sequence: m.sequence, logTime: m.logTime,
                       publishTime: m.publishTime, data: m.data });
  count++;
}
await w.end();
await close();
closeSync(fd);
console.log(`${Number(process.hrtime.bigint() - t0) / 1e9} ${count} ${pos}`);
