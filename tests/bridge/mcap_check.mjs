// mcap_check.mjs FILE - read an MCAP file with the npm @mcap/core indexed
// reader (the one Foxglove uses), through its summary: print one line per
// topic "topic schema encoding count first_ns last_ns sha1" and the totals.
// Run with NODE_PATH as mcap_open.mjs says.
import { createHash } from "node:crypto";
import { openIndexed } from "./mcap_open.mjs";

const { reader, close } = await openIndexed(process.argv[2]);
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
await close();
