// mcap_unordered.mjs write OUT | read FILE - with the npm @mcap/core writer,
// an MCAP file whose log times go back and forth on each topic (blocks
// written backwards, jitter within them, chunks that overlap); and what its
// indexed reader presents, in its order: "topic log_time length sha1" lines.
// Run with NODE_PATH as mcap_open.mjs says.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { writeFile } from "node:fs/promises";
import { openIndexed } from "./mcap_open.mjs";

const require = createRequire(process.env.NODE_PATH + "/");
const { McapWriter, TempBuffer } = require("@mcap/core");

async function write(out) {
  let seed = 7;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const times = [...Array(3000).keys()];
  const blocks = [];
  for (let i = 0; i < times.length; i += 200) blocks.push(times.slice(i, i + 200));
  for (let i = blocks.length - 1; i > 0; i--) {
    const j = rand(i + 1);
    [blocks[i], blocks[j]] = [blocks[j], blocks[i]];
  }
  const order = [];
  for (const b of blocks) {
    for (let i = 0; i + 1 < b.length; i += 3) [b[i], b[i + 1]] = [b[i + 1], b[i]];
    order.push(...b);
  }
  const buf = new TempBuffer();
  const w = new McapWriter({ writable: buf, chunkSize: 4096 });
  await w.start({ profile: "", library: "dssm bridge test" });
  const schema = await w.registerSchema({ name: "pkg/Thing", encoding: "jsonschema",
                                          data: new TextEncoder().encode("{}") });
  const chans = [];
  for (const topic of ["/scan", "/odom", "/imu"])
    chans.push(await w.registerChannel({ topic, schemaId: schema, messageEncoding: "json",
                                         metadata: new Map() }));
  let seq = 0;
  for (const i of order) {
    const t = 1700000000000000000n + BigInt(i) * 1000000n;
    const data = new TextEncoder().encode(JSON.stringify({ i, pad: "x".repeat(rand(300)) }));
    await w.addMessage({ channelId: chans[i % 3], sequence: seq++, logTime: t, publishTime: t, data });
  }
  await w.end();
  await writeFile(out, buf.get());
}

async function read(file) {
  const { reader, close } = await openIndexed(file);
  const lines = [];
  for await (const m of reader.readMessages()) {
    const ch = reader.channelsById.get(m.channelId);
    lines.push(`${ch.topic} ${m.logTime} ${m.data.length} ${createHash("sha1").update(m.data).digest("hex")}`);
  }
  console.log(lines.join("\n"));
  await close();
}

if (process.argv[2] === "write") await write(process.argv[3]);
else await read(process.argv[3]);
