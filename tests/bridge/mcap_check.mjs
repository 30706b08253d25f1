// mcap_check.mjs FILE - read an MCAP file with the npm @mcap/core indexed
// reader (the one Foxglove uses), through its summary: print one line per
// topic "topic schema encoding count first_ns last_ns sha1" and the totals.
// Run with NODE_PATH pointing at a node_modules holding @mcap/core, fzstd
// and lz4js (bench/bridge/peers.sh installs them).
import { createRequire } from "node:module";
import { open } from "node:fs/promises";
import { createHash } from "node:crypto";

const require = createRequire(process.env.NODE_PATH + "/");
const { McapIndexedReader } = require("@mcap/core");
const fzstd = require("fzstd");
const lz4 = require("lz4js");

const fh = await open(process.argv[2], "r");
const size = BigInt((await fh.stat()).size);
const readable = {
  size: async () => size,
  read: async (offset, length) => {
    const buf = new Uint8Array(Number(length));
    await fh.read(buf, 0, Number(length), Number(offset));
    return buf;
  },
};
const reader = await McapIndexedReader.Initialize({
  readable,
  decompressHandlers: {
    zstd: (data, n) => fzstd.decompress(data, new Uint8Array(Number(n))),
    lz4: (data) => Uint8Array.from(lz4.decompress(data)),
  },
});
const topics = new Map();
for (const ch of reader.channelsById.values()) {
  const schema = reader.schemasById.get(ch.schemaId);
  topics.set(ch.id, { topic: ch.topic, schema: schema ? schema.name : "-", enc: ch.messageEncoding,
                      n: 0, first: null, last: null, hash: createHash("sha1") });
}
let total = 0;
for await (const m of reader.readMessages()) {
  const t = topics.get(m.channelId);
  t.n++;
  if (t.first === null) t.first = m.logTime;
  t.last = m.logTime;
  t.hash.update(m.data);
  total++;
}
const lines = [...topics.values()].filter((t) => t.n > 0)
  .map((t) => `${t.topic} ${t.schema} ${t.enc} ${t.n} ${t.first} ${t.last} ${t.hash.digest("hex")}`)
  .sort();
console.log(lines.join("\n"));
console.log(`total ${total} chunks ${reader.chunkIndexes.length} statistics ${reader.statistics ? reader.statistics.messageCount : "none"}`);
await fh.close();
