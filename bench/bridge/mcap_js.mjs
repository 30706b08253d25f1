// mcap_js.mjs FILE TOPIC START_NS END_NS - the @mcap/core peer (the indexed
// reader Foxglove uses): open the file through its summary, read TOPIC's
// messages with START <= logTime <= END; prints
// "open_seconds query_seconds count bytes". NODE_PATH as
// tests/bridge/mcap_open.mjs says. Between open and query it runs
// DSSM_BENCH_AFTER_OPEN, untimed (cold runs drop the files' pages there:
// bench_bridge.c's after_open).
// mcap_js.mjs FILE - open the file through its summary until every
// channel's message count is known (its Statistics record, what `mcap info`
// prints); prints "open_seconds channels messages bytes_read" (bytes_read:
// /proc/self/io's rchar meanwhile), as bench_bridge open does.
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { openIndexed } from "../../tests/bridge/mcap_open.mjs";

const bytesRead = () => Number(/rchar:\s*(\d+)/.exec(readFileSync("/proc/self/io", "latin1"))[1]);

const [file, topic, start, end] = process.argv.slice(2);
if (topic === undefined) {
  const b0 = bytesRead();
  const t0 = process.hrtime.bigint();
  const { reader, close } = await openIndexed(file);
  let messages = 0n;
  for (const n of reader.statistics?.channelMessageCounts.values() ?? []) messages += n;
  const t1 = process.hrtime.bigint();
  const b1 = bytesRead();
  await close();
  console.log(`${Number(t1 - t0) / 1e9} ${reader.channelsById.size} ${messages} ${b1 - b0}`);
  process.exit(0);
}
const t0 = process.hrtime.bigint();
const { reader, close } = await openIndexed(file);
const opened = Number(process.hrtime.bigint() - t0) / 1e9;
if (process.env.DSSM_BENCH_AFTER_OPEN) execSync(process.env.DSSM_BENCH_AFTER_OPEN, { stdio: ["ignore", "ignore", "inherit"] });
const t1 = process.hrtime.bigint();
let count = 0, bytes = 0, x = 0;
const hi = BigInt(end) > 2n ** 63n ? 2n ** 64n - 1n : BigInt(end);
for await (const m of reader.readMessages({ topics: [topic], startTime: BigInt(start), endTime: hi })) {
  count++;
  bytes += m.data.length;
  for (let i = 0; i < m.data.length; i += 64) x ^= m.data[i];
}
const t2 = process.hrtime.bigint();
await close();
console.log(`${opened} ${Number(t2 - t1) / 1e9} ${count} ${bytes}`);
