// mcap_js.mjs FILE TOPIC START_NS END_NS - the @mcap/core peer (the indexed
// reader Foxglove uses): open the file through its summary, read TOPIC's
// messages with START <= logTime <= END; prints
// "open_seconds query_seconds count bytes". NODE_PATH: a node_modules with
// @mcap/core, fzstd and lz4js (bench/bridge/peers.sh node).
import { createRequire } from "node:module";
import { open } from "node:fs/promises";

const require = createRequire(process.env.NODE_PATH + "/");
const { McapIndexedReader } = require("@mcap/core");
const fzstd = require("fzstd");
const lz4 = require("lz4js");

const [file, topic, start, end] = process.argv.slice(2);
const t0 = process.hrtime.bigint();
const fh = await open(file, "r");
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
const t1 = process.hrtime.bigint();
let count = 0, bytes = 0, x = 0;
const hi = BigInt(end) > 2n ** 63n ? 2n ** 64n - 1n : BigInt(end);
for await (const m of reader.readMessages({ topics: [topic], startTime: BigInt(start), endTime: hi })) {
  count++;
  bytes += m.data.length;
  for (let i = 0; i < m.data.length; i += 64) x ^= m.data[i];
}
const t2 = process.hrtime.bigint();
await fh.close();
console.log(`${Number(t1 - t0) / 1e9} ${Number(t2 - t1) / 1e9} ${count} ${bytes}`);
