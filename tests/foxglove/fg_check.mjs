// fg_check.mjs SCENARIO URL [ARGS...] - drives `dssm foxglove` with the npm
// reference client @foxglove/ws-protocol (FoxgloveClient over the `ws`
// package) for tests/foxglove-test.sh. Prints "ok ..." and "FAIL ..." lines;
// exits 1 if anything failed. NODE_PATH: a node_modules holding
// @foxglove/ws-protocol, ws, @foxglove/rosmsg, @foxglove/rosmsg-serialization,
// @foxglove/rosmsg2-serialization. DSSM, WRITER: commands the scenarios run.
//   live URL      serverInfo, advertise (encodings, schemas), 1 kHz ros1 + cdr
//                 + json samples in order with their log times and bytes
//                 decoded, unadvertise of a removed ring, advertise of a new one
//   publish URL accepted|refused|denied   a client channel's message into ring
//                 fgt_pub: written, refused (read-only), refused (--allow-write)
//   slow URL      a paused client told what it missed: received + dropped =
//                 written; a fast client beside it gets every sample
//   hostile URL   bad ops, unknown ids, huge frames, a subscribe storm, 200
//                 clients; the server answers each with a status and stays up
//   play URL N    a recording's N samples with their recorded log times
//   limit URL     a client over --max-clients 2 is refused
//   struct URL    a struct ring (a C struct and its .msg definition) served as
//                 JSON with a JSON Schema: every sample's fields as written;
//                 a client message of the wrong size refused (not written),
//                 an unsubscribe of a non-whole id refused
//   steady URL N  N samples at 1 kHz, all delivered, beside half-created rings
//   advertised URL TOPIC   TOPIC is advertised
//   flood URL     one op with 200,000 bad entries: its sender is closed, and
//                 another client is served at once (the log is checked by the shell)
//   busy URL      publishing into ring fgt_busy while another process holds
//                 its writers' lock (writer.py hold): 5 messages dropped with
//                 one "ring busy" warning, another client served meanwhile,
//                 then "5 dropped while busy" once the lock is let go
//   gap URL T...  a recording whose samples (topic fgt_gap) are at times T...
//                 with a gap of years: all replayed, the gap jumped with a status
//   rejoin URL    a replay (fgt_ros1 at --speed 0.001) left by its only
//                 subscriber starts again from its first sample for the next
//   recreate URL  ring fgt_map removed and made again with the same layout
//                 (and more samples) between two scans: unadvertised, advertised
//                 again, and its new newest sample reaches a new subscription
//   shared URL PID  17 clients advertise 256 client channels each on ring
//                 fgt_pub: 4096 accepted (the server's cap), 256 refused, and
//                 the server (PID) maps the ring once, not once per channel
//   pubgone URL   a client channel on fgt_map, which is then made again:
//                 dropped with a status, a message on it refused
//   structbad URL a 4-byte sample in struct ring fgt_struct (24-byte structs):
//                 the subscriber told it does not match the definition, not
//                 that it reads too slowly
//   dup URL       a second shm file claims fgt_dupa:0 (it alone for a scan,
//                 then fgt_dupa created): fgt_dupa is served, and its channel
//                 stays put over two scans (fgt_tick1, fgt_tick2 advertised in turn)
//   newtopic URL  client channels on topics with no ring: a ring made for
//                 each (json; ros1 with its ros1msg schema), the messages in
//                 it, decoded by dssm cat; a schema that does not parse refused
//   control URL N a recording of N samples 1 ms apart (fgt_ros1) under the
//                 app's control, with a client of our own speaking the
//                 playbackControl messages: paused before it subscribes
//                 (nothing comes), a seek forward and play (samples from the
//                 seek point, in order, none missing, then Ended), a seek
//                 backwards while paused, play at another speed
//   odom URL      the demo's odometry handler (examples/odometry): its struct
//                 samples arrive as JSON objects with exactly the schema's fields
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import net from "node:net";
import { readFileSync } from "node:fs";

const require = createRequire(process.env.NODE_PATH + "/");
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const { parse: parseDefinition } = require("@foxglove/rosmsg");
const { MessageReader: Ros1Reader } = require("@foxglove/rosmsg-serialization");
const { MessageReader: Ros2Reader } = require("@foxglove/rosmsg2-serialization");

const [scenario, url, ...args] = process.argv.slice(2);
let failed = 0;
const ok = (what) => console.log(`  ok    ${what}`);
const bad = (what) => { console.log(`  FAIL  ${what}`); failed++; };
const check = (cond, what) => (cond ? ok(what) : bad(what));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// wss:// (FG_CA: the CA file the server's certificate is checked against)
const tlsOptions = () => (process.env.FG_CA ? { ca: readFileSync(process.env.FG_CA) } : {});

function connect() {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], tlsOptions());
  const client = new FoxgloveClient({ ws });
  const st = { ws, client, info: null, channels: new Map(), statuses: [], gone: [], messages: [] };
  client.on("serverInfo", (i) => { st.info = i; });
  client.on("advertise", (chs) => chs.forEach((c) => st.channels.set(c.id, c)));
  client.on("unadvertise", (ids) => ids.forEach((id) => { st.gone.push(id); st.channels.delete(id); }));
  client.on("status", (s) => st.statuses.push(s));
  client.on("message", (m) => st.messages.push(m));
  client.on("error", () => {});
  return st;
}

// Wait for a condition the server makes true (no timed assertion: a
// generous limit only ends a test that would otherwise hang).
async function until(cond, what, ms = 60000) {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (cond()) return true;
    await sleep(5);
  }
  bad(`${what}: never happened`);
  return false;
}

// The server answers a connection's ops in order: once the status it sends
// for an unsubscribe of an unknown id (the marker) is back, it has handled
// every op sent before (a subscription reads its ring from then on) and
// everything it sent before has arrived. Not a sleep: however slow the
// machine. marked(s) tells such a status apart.
let markers = 0;
const MARKER = 4000000000;
async function handled(st, what) {
  const id = MARKER + ++markers;
  st.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [id] }));
  await until(() => st.statuses.some((s) => s.message.includes(String(id))), what);
}
const marked = (s) => /no subscription 4000000\d\d\d/.test(s.message);

function run(cmd, argv) {
  return new Promise((resolve) => {
    const p = spawn(cmd, argv, { stdio: ["ignore", "inherit", "inherit"] });
    p.on("exit", (code) => resolve(code));
  });
}
const writer = (argv) => run("/usr/bin/python3", [process.env.WRITER, ...argv]);
const dssm = (argv) => run(process.env.DSSM, argv);
// A stream's channel as the server must name it: ROS data (ros1, cdr) by
// its ROS topic (fgt_ros1 is /fgt_ros1), anything else by its name.
const rosName = (name) => "/" + name.replaceAll(".", "/");
const byTopic = (st, name) => [...st.channels.values()].find((c) =>
  c.topic === (["ros1", "cdr"].includes(c.encoding) ? rosName(name) : name));
const t0 = () => BigInt(Math.floor(Date.now() / 1000) + 1) * 1000000000n;

async function live() {
  const st = connect();
  await until(() => st.info && st.channels.size >= 3, "serverInfo and advertise");
  check(st.info.capabilities.includes("clientPublish") && !st.info.capabilities.includes("time"),
        `serverInfo capabilities [${st.info.capabilities}], encodings [${st.info.supportedEncodings}]`);
  const want = { fgt_ros1: ["ros1", "std_msgs/String", "ros1msg"], fgt_cdr: ["cdr", "std_msgs/msg/String", "ros2msg"],
                 fgt_json: ["json", "dssm_test/Text", "jsonschema"] };
  for (const [topic, [enc, name, senc]] of Object.entries(want)) {
    const c = byTopic(st, topic);
    check(c && c.encoding === enc && c.schemaName === name && c.schemaEncoding === senc && c.schema.length > 0,
          `advertise '${topic}': ${c ? `${c.encoding} ${c.schemaName} ${c.schemaEncoding}` : "missing"}`);
  }
  const N = 1000, M = 200;
  const subs = {};
  for (const topic of [...Object.keys(want), "fgt_huge"]) subs[topic] = st.client.subscribe(byTopic(st, topic).id);
  await handled(st, "the subscriptions, before the samples");
  const base = t0();
  await Promise.all([writer(["write", "fgt_ros1", "ros1", N, base, 1000]),
                     writer(["write", "fgt_cdr", "cdr", M, base, 1000]),
                     writer(["write", "fgt_json", "json", M, base, 1000]),
                     writer(["write", "fgt_huge", "json", 50, base, 200])]);
  const count = (topic) => st.messages.filter((m) => m.subscriptionId === subs[topic]).length;
  await until(() => count("fgt_ros1") >= N && count("fgt_cdr") >= M && count("fgt_json") >= M &&
              count("fgt_huge") >= 50, "all samples");
  const readers = {
    fgt_ros1: new Ros1Reader(parseDefinition(byTopic(st, "fgt_ros1").schema)),
    fgt_cdr: new Ros2Reader(parseDefinition(byTopic(st, "fgt_cdr").schema, { ros2: true })),
  };
  // (fgt_huge: samples of up to 5 MiB, a few bytes each, read through a scratch buffer)
  for (const [topic, n] of [["fgt_ros1", N], ["fgt_cdr", M], ["fgt_json", M], ["fgt_huge", 50]]) {
    const got = st.messages.filter((m) => m.subscriptionId === subs[topic]);
    let good = 0;
    got.forEach((m, i) => {
      const bytes = new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength);
      const text = topic === "fgt_json" || topic === "fgt_huge" ? JSON.parse(new TextDecoder().decode(bytes)).text
                                        : readers[topic].readMessage(bytes).data;
      if (text === `msg ${i}` && m.timestamp === base + BigInt(i) * 1000000n) good++;
    });
    check(got.length === n && good === n,
          `'${topic}': ${got.length} of ${n} samples, ${good} in order with the written fields and log times`);
  }
  // a late joiner gets the newest sample at once, and nothing older
  const late = connect();
  await until(() => late.info && byTopic(late, "fgt_cdr"), "advertise to a late joiner");
  late.client.subscribe(byTopic(late, "fgt_cdr").id);
  await until(() => late.messages.length >= 1, "the newest sample for a late joiner");
  await handled(late, "the late joiner's subscription"); // what it was sent for it is here
  const l0 = late.messages[0];
  check(late.messages.length === 1 && l0 && readers.fgt_cdr.readMessage(new Uint8Array(l0.data.buffer, l0.data.byteOffset,
        l0.data.byteLength)).data === `msg ${M - 1}` && l0.timestamp === base + BigInt(M - 1) * 1000000n,
        `a late subscriber to 'fgt_cdr' gets the newest sample at once (${late.messages.length} message)`);
  late.client.close();
  // a ring removed: its channel unadvertised; a new one: advertised
  const jsonId = byTopic(st, "fgt_json").id;
  await dssm(["rm", "fgt_json"]);
  await until(() => st.gone.includes(jsonId), "unadvertise of the removed ring");
  check(st.gone.includes(jsonId), `unadvertise of channel ${jsonId} after \`dssm rm fgt_json\``);
  await writer(["create", "fgt_new", "json"]);
  await until(() => byTopic(st, "fgt_new"), "advertise of a new ring");
  check(byTopic(st, "fgt_new"), "advertise of the new ring 'fgt_new'");
  check(st.statuses.filter((s) => s.level >= 1 && !marked(s)).length === 0,
        `no warnings or errors (${st.statuses.filter((s) => !marked(s)).map((s) => s.message).join("; ") || "none"})`);
  st.client.close();
}

async function publish(expect) {
  const st = connect();
  await until(() => st.info, "serverInfo");
  const offered = st.info.capabilities.includes("clientPublish");
  const id = st.client.advertise({ topic: "fgt_pub", encoding: "json", schemaName: "dssm_test/Text" });
  await sleep(200);
  st.client.sendMessage(id, new TextEncoder().encode('{"i":7,"text":"from foxglove"}'));
  // then a marker round trip: an op the server answers, after ours
  st.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [999999] }));
  await until(() => st.statuses.some((s) => s.message.includes("999999")), "status after the publish");
  const errors = st.statuses.filter((s) => s.level === 2 && !s.message.includes("999999"));
  if (expect === "denied") // offered, but not for this ring (--allow-write)
    check(offered && errors.length >= 1 && /not writable/.test(errors[0].message),
          `--allow-write elsewhere: publish to fgt_pub refused: ${errors.map((s) => s.message).join("; ")}`);
  else if (expect === "refused")
    check(!offered && errors.length >= 1 && /read-only|not advertised/.test(errors[0].message),
          `read-only: no clientPublish capability, publish refused: ${errors.map((s) => s.message).join("; ")}`);
  else
    check(offered && errors.length === 0, `clientPublish offered, publish accepted ${errors.map((s) => s.message)}`);
  st.client.close();
}

async function slow() {
  const st = connect(), fast = connect();
  await until(() => st.info && byTopic(st, "fgt_big") && fast.info && byTopic(fast, "fgt_big"), "advertise of fgt_big");
  const sub = st.client.subscribe(byTopic(st, "fgt_big").id);
  fast.client.subscribe(byTopic(fast, "fgt_big").id);
  await handled(st, "the slow client's subscription");
  await handled(fast, "the fast client's subscription");
  st.ws._socket.pause(); // reads nothing: the server's queue for it fills
  const N = 4000;
  await writer(["write", "fgt_big", "json", N, t0(), 1000, 10000]);
  st.ws._socket.resume();
  const newest = (c) => c.messages.length &&
    JSON.parse(new TextDecoder().decode(c.messages[c.messages.length - 1].data)).i === N - 1;
  await until(() => newest(st) && newest(fast), "the newest sample");
  const told = (c) => c.statuses.map((s) => /dropped (\d+) messages of 'fgt_big'/.exec(s.message))
    .filter(Boolean).reduce((a, m) => a + Number(m[1]), 0);
  const dropped = told(st);
  const idx = (c) => c.messages.map((m) => JSON.parse(new TextDecoder().decode(m.data)).i);
  const ordered = (v) => v.every((x, i) => i === 0 || x > v[i - 1]);
  check(dropped > 0 && st.messages.length + dropped === N && ordered(idx(st)) && st.messages.every((m) => m.subscriptionId === sub),
        `slow client: ${st.messages.length} received + ${dropped} told dropped = ${N} written, in order, newest last`);
  // The fast one is held back by no one: while the slow one is paused it
  // alone decides how fast the ring is read. (Once both read, the slower of
  // the two at any moment may lose some, and is told: the machine is shared.)
  const f = idx(fast);
  check(f.length + told(fast) === N && ordered(f) && f.length > st.messages.length,
        `a fast client beside it: ${f.length} of ${N} in order (${told(fast)} told dropped)`);
  st.client.close();
  fast.client.close();
}

async function hostile() {
  const raw = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const statuses = [];
  raw.on("message", (d, isBinary) => {
    if (!isBinary) {
      const m = JSON.parse(d.toString());
      if (m.op === "status") statuses.push(m);
    }
  });
  await new Promise((r) => raw.on("open", r));
  const bad_ops = [
    "not json", "{}", '{"op":5}', "[1,2,3]", '{"op":"subscribe"}', '{"op":"subscribe","subscriptions":[{"id":1}]}',
    '{"op":"subscribe","subscriptions":[{"id":1,"channelId":99999}]}', '{"op":"subscribe","subscriptions":[{"id":-1,"channelId":1.5}]}',
    '{"op":"unsubscribe","subscriptionIds":[42]}', '{"op":"getParameters","parameterNames":[]}', '{"op":"fetchAsset","uri":"x","requestId":1}',
    '{"op":"nope"}', '{"op":"subscribe","subscriptions":[' + "[".repeat(100000), '"\\ud800\\u0000"', '{"op":"\\u0000"}',
    // a value every 2 bytes: its tree would take 20 times the text on a 64-bit
    // host (40-byte nodes; json.c bounds it at 16)
    '{"op":"unsubscribe","subscriptionIds":[' + "0,".repeat(300000) + "0]}",
  ];
  for (const t of bad_ops) raw.send(t);
  raw.send(Buffer.from([0x09, 1, 2, 3]));            // unknown binary opcode
  raw.send(Buffer.from([0x01, 0x39, 0x05, 0, 0, 1])); // message data on a channel never advertised
  raw.send(Buffer.from([0x01, 1]));                  // truncated
  raw.send(Buffer.from([0x02, 1, 0, 0, 0]));         // a service call
  raw.send("x".repeat(3 << 20));                     // 3 MiB text over --max-message
  raw.send(Buffer.alloc(5 << 20, 1));                // 5 MiB binary
  const expected = bad_ops.length + 6;
  await until(() => statuses.length >= expected, `${expected} status errors`);
  check(statuses.length === expected && statuses.every((s) => s.level === 2),
        `${statuses.length} bad messages, each answered by an error status: ${statuses.slice(-2).map((s) => s.message).join(" | ")}`);
  const dense = statuses.find((s) => /too many values/.test(s.message));
  check(dense, `300,000 ids in 600 KB refused for the memory their parse would take: ${dense ? dense.message : "not refused"}`);
  // a subscribe storm: 5000 ids on one channel; one succeeds, the rest are refused
  const st = connect();
  await until(() => st.info && st.channels.size > 0, "serverInfo");
  const ch = [...st.channels.keys()][0];
  for (let i = 0; i < 5000; i++) st.ws.send(JSON.stringify({ op: "subscribe", subscriptions: [{ id: i, channelId: ch }] }));
  await until(() => st.statuses.length >= 4999, "storm answered");
  check(st.statuses.length === 4999, `subscribe storm: 5000 subscriptions to one channel, ${st.statuses.length} refused`);
  // 200 clients at once, each told serverInfo and the channels
  const many = Array.from({ length: 200 }, () => connect());
  await until(() => many.every((c) => c.info && c.channels.size > 0), "200 clients served");
  check(many.every((c) => c.info && c.channels.size > 0), "200 clients at once: each got serverInfo and advertise");
  many.forEach((c) => c.client.close());
  raw.close();
  st.client.close();
  // bad frames and killed peers below the protocol: plain HTTP, garbage bytes,
  // an unmasked frame, a frame claiming 2^63 bytes then a cut, a subscriber
  // killed while samples flow
  const port = Number(new URL(url).port);
  const tcp = (bytes) => new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1", () => sock.end(bytes));
    sock.on("error", () => {});
    sock.on("close", resolve);
    sock.resume();
    setTimeout(() => sock.destroy(), 3000);
  });
  await tcp("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  await tcp(Buffer.alloc(100000, 0xff));
  const frames = [Buffer.from([0x82, 0x03, 1, 2, 3]),                                     // unmasked
                  Buffer.from([0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 9])]; // 2^63 - 1
  for (const f of frames) {
    const w = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
    w.on("error", () => {});
    await new Promise((r) => w.on("open", r));
    w._socket.write(f);
    await sleep(100);
    w._socket.destroy();
  }
  const victim = connect();
  await until(() => victim.info && byTopic(victim, "fgt_cdr"), "advertise to the victim");
  victim.client.subscribe(byTopic(victim, "fgt_cdr").id);
  const writing = writer(["write", "fgt_cdr", "cdr", 500, t0() + 100000000000n, 1000]);
  await sleep(200);
  victim.ws._socket.destroy();
  await writing;
  const after = connect();
  await until(() => after.info, "serverInfo after the bad frames");
  check(after.info, "plain HTTP, garbage bytes, an unmasked frame, a 2^63-byte frame cut short and a killed subscriber: the server still serves");
  after.client.close();
}

async function play(n) {
  const st = connect();
  await until(() => st.info && st.channels.size > 0, "serverInfo and advertise");
  check(st.info.capabilities.includes("time") && !st.info.capabilities.includes("clientPublish"),
        `recording: capabilities [${st.info.capabilities}]`);
  let times = 0, endAt = -1;
  st.client.on("time", () => times++);
  st.client.on("status", (s) => { if (/end of the recording/.test(s.message)) endAt = st.messages.length; });
  const c = byTopic(st, "fgt_ros1");
  st.client.subscribe(c.id);
  await until(() => endAt >= 0, "end of the recording");
  const reader = new Ros1Reader(parseDefinition(c.schema));
  const texts = st.messages.map((m) => reader.readMessage(new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength)).data);
  const first = st.messages.length ? st.messages[0].timestamp : 0n;
  const good = st.messages.filter((m, i) => texts[i] === `msg ${i}` && m.timestamp === first + BigInt(i) * 1000000n).length;
  check(st.messages.length === Number(n) && good === Number(n) && times > 0 && endAt === Number(n),
        `recording replayed: ${st.messages.length} of ${n} samples with their recorded log times, ${times} time messages, then the end`);
  st.client.close();
}

async function busy() {
  const holder = spawn("/usr/bin/python3", [process.env.WRITER, "hold", "fgt_busy", "json"],
                       { stdio: ["pipe", "pipe", "inherit"] });
  let held = false;
  holder.stdout.on("data", (d) => { if (/held/.test(d)) held = true; });
  const a = connect(), b = connect();
  await until(() => a.info && b.info && held, "two clients and the lock held");
  const id = a.client.advertise({ topic: "fgt_busy", encoding: "json", schemaName: "dssm_test/Text" });
  for (let i = 0; i < 5; i++)
    a.client.sendMessage(id, new TextEncoder().encode(`{"i":${i}}`));
  // after a's 5 messages: a's own marker, and b's, each answered by the loop
  a.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [999999] }));
  b.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [888888] }));
  const answered = (st, n) => st.statuses.some((s) => s.message.includes(n));
  await until(() => answered(a, "999999") && answered(b, "888888"), "answers while the ring is locked", 20000);
  const warned = a.statuses.filter((s) => /ring busy/.test(s.message));
  check(warned.length === 1 && warned[0].level === 1 && /'fgt_busy'/.test(warned[0].message),
        `5 messages into a locked ring: one warning (${warned.map((s) => s.message)}), the loop answered both clients`);
  holder.stdin.end();
  await new Promise((r) => holder.on("exit", r));
  a.client.sendMessage(id, new TextEncoder().encode('{"i":5}'));
  await until(() => a.statuses.some((s) => /free again/.test(s.message)), "ring free again");
  const free = a.statuses.find((s) => /free again/.test(s.message));
  check(free && /5 messages were dropped/.test(free.message), `lock let go: ${free && free.message}`);
  a.client.close();
  b.client.close();
}

async function gap(...times) {
  const st = connect();
  await until(() => st.info && byTopic(st, "fgt_gap"), "the recording's channel");
  let end = false;
  st.client.on("status", (s) => { if (/end of the recording/.test(s.message)) end = true; });
  st.client.subscribe(byTopic(st, "fgt_gap").id);
  await until(() => end, "end of a recording with a gap of years", 20000);
  const got = st.messages.map((m) => m.timestamp.toString()).join(" ");
  const jumped = st.statuses.filter((s) => /jumped over a gap/.test(s.message));
  check(got === times.join(" ") && jumped.length === 1,
        `a gap of years jumped: samples at ${got}; ${jumped.map((s) => s.message)}`);
  st.client.close();
}

async function rejoin() {
  const a = connect();
  await until(() => a.info && byTopic(a, "fgt_ros1"), "the recording's channel");
  a.client.subscribe(byTopic(a, "fgt_ros1").id);
  await until(() => a.messages.length >= 1, "the first sample");
  const first = a.messages[0].timestamp;
  a.client.close();
  await new Promise((r) => (a.ws.readyState === 3 ? r() : a.ws.on("close", r)));
  const b = connect();
  await until(() => b.info && byTopic(b, "fgt_ros1"), "the recording's channel again");
  b.client.subscribe(byTopic(b, "fgt_ros1").id);
  await until(() => b.messages.length >= 1, "a sample for the next subscriber");
  check(b.messages[0].timestamp === first,
        `the replay left by its subscriber restarts for the next: first log time ${b.messages[0].timestamp}, was ${first}`);
  b.client.close();
}

async function recreate() {
  const st = connect();
  await until(() => st.info && byTopic(st, "fgt_map"), "fgt_map advertised");
  const old = byTopic(st, "fgt_map").id;
  st.client.subscribe(old);
  await until(() => st.messages.length >= 1, "the map's newest sample");
  await writer(["recreate", "fgt_map", "json", "3"]);
  await until(() => st.gone.includes(old) && byTopic(st, "fgt_map"), "fgt_map unadvertised and advertised again", 20000);
  const neu = byTopic(st, "fgt_map");
  const n = st.messages.length;
  st.client.subscribe(neu ? neu.id : old);
  await until(() => st.messages.length > n, "the new ring's newest sample", 20000);
  const last = st.messages.length > n ? new TextDecoder().decode(st.messages[n].data) : "";
  check(neu && neu.id !== old && /"i": 102/.test(last),
        `a ring made again (same layout): channel ${old} -> ${neu && neu.id}, newest ${last}`);
  st.client.close();
}

async function shared(pid) {
  const cs = Array.from({ length: 17 }, () => connect());
  await until(() => cs.every((c) => c.info), "17 clients");
  cs.forEach((c) => c.ws.send(JSON.stringify({ op: "advertise",
    channels: Array.from({ length: 256 }, (_, i) => ({ id: i + 1, topic: "fgt_pub", encoding: "json" })) })));
  cs.forEach((c) => c.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [999999] })));
  await until(() => cs.every((c) => c.statuses.some((s) => s.message.includes("999999"))), "answers to 17 x 256 advertisements");
  const refused = cs.reduce((n, c) => n + c.statuses.filter((s) => /4096 client channels on this server/.test(s.message)).length, 0);
  const other = cs.reduce((n, c) => n + c.statuses.filter((s) => s.level === 2 && !/999999|4096 client/.test(s.message)).length, 0);
  const seg = `dssm:${process.env.DSSM_NAMESPACE}:fgt_pub:0`;
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8").split("\n").filter((l) => l.includes(seg)).length;
  check(refused === 256 && other === 0 && maps >= 1 && maps <= 2,
        `17 x 256 client channels on one ring: ${17 * 256 - refused} accepted, ${refused} refused at the cap (${other} other errors); the ring mapped ${maps} time(s)`);
  cs.forEach((c) => c.client.close());
}

async function pubgone() {
  const st = connect();
  await until(() => st.info, "serverInfo");
  const id = st.client.advertise({ topic: "fgt_map", encoding: "json", schemaName: "dssm_test/Text" });
  st.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [999999] }));
  await until(() => st.statuses.some((s) => s.message.includes("999999")), "the advertisement handled");
  await writer(["recreate", "fgt_map", "json", "3"]);
  await until(() => st.statuses.some((s) => /removed or made again/.test(s.message)), "a status for the client channel on the ring made again", 20000);
  st.client.sendMessage(id, new TextEncoder().encode('{"i":9}'));
  await until(() => st.statuses.some((s) => /not advertised/.test(s.message)), "the dropped channel's message refused", 20000);
  const said = st.statuses.find((s) => /removed or made again/.test(s.message));
  check(said && said.level === 1 && /'fgt_map'/.test(said.message), `a client channel on a ring made again: ${said && said.message}`);
  st.client.close();
}

async function structbad() {
  const st = connect();
  await until(() => st.info && byTopic(st, "fgt_struct"), "fgt_struct advertised");
  st.client.subscribe(byTopic(st, "fgt_struct").id);
  await until(() => st.messages.length >= 1, "its newest sample");
  // (dssm write refuses a struct of the wrong size: the library does not)
  await run("/usr/bin/python3", ["-c", `
import sys
sys.path.insert(0, "python")
import dssm
s = dssm.open("fgt_struct", write=True)
s.write(b"abcd")
s.close()`]);
  await until(() => st.statuses.some((s) => /do not match/.test(s.message)), "a status for the undecodable sample", 20000);
  const said = st.statuses.find((s) => /do not match/.test(s.message));
  check(said && /^1 messages of 'fgt_struct'/.test(said.message) && !st.statuses.some((s) => /slower/.test(s.message)),
        `a sample that does not match its struct: ${said && said.message}`);
  st.client.close();
}

async function dup() {
  const st = connect();
  // a scan sees only the second file (no file of the name fgt_dupa:0 yet),
  // then the ring itself is created: it is served
  await until(() => st.info, "serverInfo");
  await writer(["create", "fgt_tick0", "json"]);
  await until(() => byTopic(st, "fgt_tick0"), "fgt_tick0 advertised", 20000);
  await writer(["create", "fgt_dupa", "json"]);
  await until(() => byTopic(st, "fgt_dupa"), "fgt_dupa advertised", 20000);
  const id = byTopic(st, "fgt_dupa").id;
  for (const tick of ["fgt_tick1", "fgt_tick2"]) { // each advertised by a later scan
    await writer(["create", tick, "json"]);
    await until(() => byTopic(st, tick), `${tick} advertised`, 20000);
  }
  const dupa = [...st.channels.values()].filter((c) => c.topic === "fgt_dupa");
  check(!st.gone.includes(id) && dupa.length === 1 && dupa[0].id === id,
        `a NAME:ID listed twice: channel ${id} kept over two scans (unadvertised: [${st.gone}])`);
  st.client.close();
}

// limit URL: with --max-clients 2, a third connection is closed unserved
async function structs() {
  const st = connect();
  await until(() => st.info && byTopic(st, "fgt_struct"), "advertise of the struct ring");
  const c = byTopic(st, "fgt_struct");
  let schema = null;
  try { schema = JSON.parse(c.schema); } catch (e) { /* checked below */ }
  check(c.encoding === "json" && c.schemaEncoding === "jsonschema" && c.schemaName === "demo/Pair" && schema &&
        JSON.stringify(Object.keys(schema.properties || {})) === '["x","n","v"]',
        `advertise 'fgt_struct': ${c.encoding} ${c.schemaName} ${c.schemaEncoding} ${c.schema}`);
  const sub = st.client.subscribe(c.id);
  await handled(st, "the subscription to the struct ring");
  // (in the past: a message published below is stamped with its arrival)
  const N = 100, base = t0() - 10000000000n;
  await run("/usr/bin/python3", ["-c", `
import struct, sys
sys.path.insert(0, "python")
import dssm
s = dssm.open("fgt_struct", write=True)
for i in range(${N}):
    s.write(struct.pack("=di3f", i / 4, -i, i, i + 0.5, 1e30), ${base} + i * 1000000)
s.close()`]);
  await until(() => st.messages.filter((m) => m.subscriptionId === sub).length >= N, "all struct samples");
  const got = st.messages.filter((m) => m.subscriptionId === sub);
  let good = 0;
  got.forEach((m, i) => {
    const o = JSON.parse(new TextDecoder().decode(new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength)));
    if (o.x === i / 4 && o.n === -i && o.v.length === 3 && o.v[0] === i && o.v[1] === i + 0.5 &&
        m.timestamp === base + BigInt(i) * 1000000n) good++;
  });
  check(got.length === N && good === N, `'fgt_struct': ${got.length} of ${N} samples as JSON, ${good} with the struct's fields and log times`);
  // refused, the connection kept: an unsubscribe of id sub + 0.5 (not a whole
  // number: not subscription sub), and a message of 23 bytes into the ring of
  // 24-byte structs (not written); a right one after them is
  st.ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [sub + 0.5] }));
  const pub = st.client.advertise({ topic: "fgt_struct", encoding: "struct", schemaName: "demo/Pair" });
  st.client.sendMessage(pub, new Uint8Array(23));
  const right = new DataView(new ArrayBuffer(24));
  right.setFloat64(0, 1000, true);
  right.setInt32(8, -1000, true);
  [1, 2, 3].forEach((v, i) => right.setFloat32(12 + 4 * i, v, true));
  st.client.sendMessage(pub, new Uint8Array(right.buffer));
  await until(() => st.messages.filter((m) => m.subscriptionId === sub).length >= N + 1, "the published struct");
  const last = st.messages.filter((m) => m.subscriptionId === sub)[N];
  const o = last && JSON.parse(new TextDecoder().decode(new Uint8Array(last.data.buffer, last.data.byteOffset, last.data.byteLength)));
  const errs = st.statuses.filter((s) => s.level === 2 && !marked(s)).map((s) => s.message);
  check(errs.some((m) => /unsubscribe.*not a whole number/.test(m)) && o && o.x === 1000,
        `unsubscribe ${sub + 0.5} refused, subscription ${sub} kept: ${errs.find((m) => /unsubscribe/.test(m))}`);
  check(errs.some((m) => /'fgt_struct'.* 23 bytes.* 24 bytes.*not written/.test(m)) && o && o.n === -1000 && st.ws.readyState === 1,
        `a 23-byte message into a ring of 24-byte structs is refused, the connection kept: ${errs.find((m) => /fgt_struct/.test(m))}`);
  // JSON into the struct ring: encoded by its definition (as dssm write does);
  // a field it does not have is refused, naming it
  const jpub = st.client.advertise({ topic: "fgt_struct", encoding: "json", schemaName: "demo/Pair" });
  const enc = (o) => new TextEncoder().encode(JSON.stringify(o));
  st.client.sendMessage(jpub, enc({ x: 1, nope: 2 }));
  st.client.sendMessage(jpub, enc({ x: 2000.5, n: 7, v: [1, 2, 3] }));
  await until(() => st.messages.filter((m) => m.subscriptionId === sub).length >= N + 2, "the struct published as JSON");
  const viaJson = st.messages.filter((m) => m.subscriptionId === sub)[N + 1];
  const j = viaJson && JSON.parse(new TextDecoder().decode(new Uint8Array(viaJson.data.buffer, viaJson.data.byteOffset, viaJson.data.byteLength)));
  const errs2 = st.statuses.filter((s) => s.level === 2).map((s) => s.message);
  check(j && j.x === 2000.5 && j.n === 7 && j.v[2] === 3 && errs2.some((m) => /has no field 'nope'/.test(m)),
        `JSON published into a struct ring is encoded by its definition (${JSON.stringify(j)}); a typo refused: ${errs2.find((m) => /nope/.test(m))}`);
  st.client.close();
}

// steady URL N: a subscriber of ring fgt_steady gets every one of N samples
// written at 1 kHz, none dropped, while ring files half-created by dead or
// slow creators lie beside it (the loop must never wait for them)
async function steady(n) {
  const N = Number(n);
  const st = connect();
  await until(() => st.info && byTopic(st, "fgt_steady"), "advertise of fgt_steady");
  const sub = st.client.subscribe(byTopic(st, "fgt_steady").id);
  await handled(st, "the subscription to fgt_steady");
  await writer(["write", "fgt_steady", "json", N, t0(), 1000]);
  const mine = () => st.messages.filter((m) => m.subscriptionId === sub);
  const newest = () => mine().length && JSON.parse(new TextDecoder().decode(mine()[mine().length - 1].data)).i === N - 1;
  await until(newest, "the newest sample of fgt_steady");
  const dropped = st.statuses.filter((s) => /dropped/.test(s.message));
  check(mine().length === N && dropped.length === 0,
        `beside half-created rings: ${mine().length} of ${N} samples delivered, ${dropped.length ? dropped[0].message : "none dropped"}`);
  check(!byTopic(st, "fgt_half0"), "a half-created ring is not advertised");
  st.client.close();
}

// advertised URL TOPIC: the channel TOPIC is advertised (a ring that became ready)
async function advertised(topic) {
  const st = connect();
  await until(() => st.info && byTopic(st, topic), `advertise of ${topic}`);
  check(byTopic(st, topic), `'${topic}' is advertised once ready`);
  st.client.close();
}

async function odom() {
  const st = connect();
  await until(() => st.info && byTopic(st, "odom"), "advertise of the demo's odom");
  const c = byTopic(st, "odom");
  let schema = null;
  try { schema = JSON.parse(c.schema); } catch (e) { /* checked below */ }
  const keys = Object.keys((schema && schema.properties) || {});
  check(c.encoding === "json" && c.schemaEncoding === "jsonschema" && keys.length >= 3,
        `advertise the demo's 'odom': ${c.encoding} ${c.schemaName} ${c.schemaEncoding}, fields [${keys}]`);
  const sub = st.client.subscribe(c.id);
  await until(() => st.messages.filter((m) => m.subscriptionId === sub).length >= 50, "50 odometry samples");
  const got = st.messages.filter((m) => m.subscriptionId === sub);
  let good = 0, last = -1n;
  for (const m of got) {
    const o = JSON.parse(new TextDecoder().decode(new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength)));
    const matches = JSON.stringify(Object.keys(o)) === JSON.stringify(keys) &&
      keys.every((k) => schema.properties[k].type !== "number" || typeof o[k] === "number");
    if (matches && m.timestamp > last) good++;
    last = m.timestamp;
  }
  check(got.length >= 50 && good === got.length,
        `the demo's odometry: ${good} of ${got.length} samples are JSON objects with the schema's fields, in time order` +
        (got.length >= 50 ? "" : ` (unadvertised: [${st.gone}], statuses: ${st.statuses.map((x) => x.message).join("; ")})`));
  st.client.close();
}

async function flood() {
  const a = connect();
  await until(() => a.info, "serverInfo for the flooding client");
  a.ws.send(JSON.stringify({ op: "subscribe", subscriptions: new Array(200000).fill(0).map((_, i) => ({ id: i, channelId: 999999 })) }));
  await sleep(200);
  const t0 = Date.now();
  const b = connect();
  await until(() => b.info, "serverInfo for a client beside the flood");
  check(b.info, `a client beside one op of 200,000 bad entries is served (${Date.now() - t0} ms)`);
  b.client.close();
  a.client.close();
}

async function bigadv() {
  const st = connect();
  await until(() => st.info && [...st.channels.values()].filter((c) => c.topic.startsWith("fgt_big_schema")).length >= 6,
              "advertise of 6 channels with 200 KB schemas");
  const got = [...st.channels.values()].filter((c) => c.topic.startsWith("fgt_big_schema"));
  check(got.length === 6 && got.every((c) => c.schema.length >= 200000),
        `a channel table of ${got.length} x 200 KB schemas (over 1 MiB) reaches a client`);
  st.client.close();
}

async function limit() {
  const a = connect(), b = connect();
  await until(() => a.info && b.info, "two clients served");
  const c = connect();
  let closed = false;
  c.ws.on("close", () => { closed = true; });
  await until(() => closed || c.info, "the third client closed");
  check(closed && !c.info && a.ws.readyState === 1 && b.ws.readyState === 1,
        "--max-clients 2: a third client is refused, the two served stay");
  a.client.close();
  b.client.close();
}

// ---- playback control, with a client of our own (the reference client of
// npm has no playback messages): the frames of the Foxglove SDK's
// playbackControl capability, little-endian
async function control(n) {
  n = Number(n);
  const ws = new WebSocket(url, ["foxglove.websocket.v1"]);
  const st = { info: null, channels: new Map(), statuses: [], states: [], data: [] };
  ws.on("message", (buf, binary) => {
    if (!binary) {
      const m = JSON.parse(buf.toString());
      if (m.op === "serverInfo") st.info = m;
      if (m.op === "advertise") m.channels.forEach((c) => st.channels.set(c.id, c));
      if (m.op === "status") st.statuses.push(m);
      return;
    }
    const b = Buffer.from(buf);
    if (b[0] === 1) st.data.push(b.readBigUInt64LE(5));
    if (b[0] === 5) {
      const len = b.readUInt32LE(15);
      st.states.push({ status: b[1], time: b.readBigUInt64LE(2), speed: b.readFloatLE(10),
                       didSeek: b[14], id: b.subarray(19, 19 + len).toString() });
    }
  });
  ws.on("error", () => {});
  const request = (pause, speed, seek, id) => {
    const b = Buffer.alloc(19 + id.length);
    b[0] = 3; b[1] = pause ? 1 : 0; b.writeFloatLE(speed, 2);
    b[6] = seek === null ? 0 : 1; b.writeBigUInt64LE(seek === null ? 0n : seek, 7);
    b.writeUInt32LE(id.length, 15); b.write(id, 19);
    ws.send(b);
  };
  const state = async (id) => {
    await until(() => st.states.some((s) => s.id === id), `Playback State answering ${id}`);
    return st.states.find((s) => s.id === id);
  };
  const marker = async (what) => {
    const id = MARKER + ++markers;
    ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [id] }));
    await until(() => st.statuses.some((s) => s.message.includes(String(id))), what);
  };
  await until(() => st.info && byTopic(st, "fgt_ros1"), "serverInfo and the recording's channel");
  const c = byTopic(st, "fgt_ros1");
  const start = BigInt(st.info.dataStartTime?.sec ?? 0) * 1000000000n + BigInt(st.info.dataStartTime?.nsec ?? 0);
  const end = BigInt(st.info.dataEndTime?.sec ?? 0) * 1000000000n + BigInt(st.info.dataEndTime?.nsec ?? 0);
  check(st.info.capabilities.includes("playbackControl") && end - start === BigInt(n - 1) * 1000000n,
        `playbackControl offered with the recording's range (${Number(end - start) / 1e6} ms), the ROS channel named ${c.topic}`);
  // paused first: a subscription then starts nothing
  request(true, 1, null, "pause");
  const paused = await state("pause");
  ws.send(JSON.stringify({ op: "subscribe", subscriptions: [{ id: 1, channelId: c.id }] }));
  await marker("subscribe handled");
  check(paused.status === 1 && st.data.length === 0, `paused before subscribing: state ${paused.status}, ${st.data.length} samples sent`);
  // a seek forward, playing at 10x: from the seek point to the end, then Ended
  const mid = start + BigInt(Math.floor(n / 2)) * 1000000n;
  request(false, 10, mid, "seek-fwd");
  const fwd = await state("seek-fwd");
  await until(() => st.states.some((s) => s.status === 3 && s.id === ""), "Ended after the seek forward");
  const want = n - Math.floor(n / 2);
  const inOrder = st.data.every((t, i) => t === mid + BigInt(i) * 1000000n);
  check(fwd.status === 0 && fwd.didSeek === 1 && fwd.time === mid && Math.abs(fwd.speed - 10) < 1e-6 &&
        st.data.length === want && inOrder,
        `seek forward to sample ${Math.floor(n / 2)} and play at 10x: ${st.data.length} of ${want} samples from the seek point, in order, then Ended`);
  // a seek backwards while paused: nothing comes until play
  st.data = [];
  const back = start + 20n * 1000000n;
  request(true, 10, back, "seek-back");
  const b = await state("seek-back");
  await marker("seek handled");
  check(b.status === 1 && b.didSeek === 1 && b.time === back && st.data.length === 0,
        `seek backwards while paused: state ${b.status} at sample 20, nothing sent`);
  // play at another speed: samples 20 .. N-1, then Ended again
  const ends = st.states.filter((s) => s.status === 3).length;
  request(false, 100, null, "play-100");
  const p = await state("play-100");
  await until(() => st.states.filter((s) => s.status === 3).length > ends, "Ended after playing on");
  check(p.status === 0 && Math.abs(p.speed - 100) < 1e-6 && st.data.length === n - 20 &&
        st.data.every((t, i) => t === back + BigInt(i) * 1000000n),
        `play on at 100x: ${st.data.length} of ${n - 20} samples from sample 20, in order`);
  // a bad request is refused with a status, the connection kept
  ws.send(Buffer.from([3, 7, 0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
  await until(() => st.statuses.some((s) => /neither play/.test(s.message)), "a bad command refused");
  ws.close();
}

async function newtopic() {
  const st = connect();
  await until(() => st.info, "serverInfo");
  const j = st.client.advertise({ topic: "/fgt_newj", encoding: "json", schemaName: "demo/Note" });
  const r = st.client.advertise({ topic: "/fgt/newr", encoding: "ros1", schemaName: "std_msgs/String",
                                  schema: "string data\n", schemaEncoding: "ros1msg" });
  st.client.advertise({ topic: "/fgt_newbad", encoding: "ros1", schemaName: "x/Y",
                        schema: "strnig data\n", schemaEncoding: "ros1msg" });
  st.client.sendMessage(j, new TextEncoder().encode('{"text":"hello"}'));
  const ros1 = new Uint8Array([5, 0, 0, 0, 104, 101, 108, 108, 111]); // "hello"
  st.client.sendMessage(r, ros1);
  await handled(st, "the new topics published");
  const cat = (name) => new Promise((resolve) => {
    const p = spawn(process.env.DSSM, ["cat", name, "--format", "json"], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    p.stdout.on("data", (d) => { out += d; });
    p.on("exit", () => resolve(out));
  });
  const a = await cat("fgt_newj"), b = await cat("fgt.newr");
  const bad = st.statuses.find((s) => /fgt_newbad/.test(s.message));
  check(/"msg":\{"text":"hello"\}/.test(a) && /"msg":\{"data":"hello"\}/.test(b) && bad && /does not parse/.test(bad.message),
        `new topics: rings made (json: ${a.trim().slice(0, 60)}...; ros1 /fgt/newr as fgt.newr decoded); a bad schema refused: ${bad && bad.message}`);
  st.client.close();
  await dssm(["rm", "fgt_newj", "fgt.newr"]);
}

// A ROS ring with an ID (fgt_idx:3) is the topic /fgt_idx_3, as `dssm
// export` names it, so a layout made live binds on the exported file; a
// client publishing on that topic writes into fgt_idx:3.
async function rostopic() {
  const st = connect();
  const named = (t) => [...st.channels.values()].find((c) => c.topic === t);
  await until(() => st.info && named("/fgt_idx_3"), "advertise of /fgt_idx_3");
  check(named("/fgt_idx_3") && !named("/fgt_idx:3"), "ring fgt_idx:3 (ros1) is the channel /fgt_idx_3");
  const r = st.client.advertise({ topic: "/fgt_idx_3", encoding: "ros1", schemaName: "std_msgs/String",
                                  schema: "string data\n", schemaEncoding: "ros1msg" });
  st.client.sendMessage(r, new Uint8Array([5, 0, 0, 0, 104, 101, 108, 108, 111])); // "hello"
  await handled(st, "the message on /fgt_idx_3 published");
  const out = await new Promise((resolve) => {
    const p = spawn(process.env.DSSM, ["cat", "fgt_idx:3", "-n", "1", "--format", "json"],
                    { stdio: ["ignore", "pipe", "ignore"] });
    let o = "";
    p.stdout.on("data", (d) => { o += d; });
    p.on("exit", () => resolve(o));
  });
  check(/"msg":\{"data":"hello"\}/.test(out), `publishing on /fgt_idx_3 writes into fgt_idx:3: ${out.trim().slice(0, 80)}`);
  st.client.close();
}

// wss:// (dssm foxglove --tls-cert): a client trusting the CA subscribes
// and gets the samples written; a plain ws:// client to the same port, and
// a wss:// client that does not trust the CA, never get a connection.
async function wss(topic) {
  const st = connect();
  await until(() => st.info && byTopic(st, topic), "serverInfo and advertise over wss");
  const sub = st.client.subscribe(byTopic(st, topic).id);
  await handled(st, "the subscription, before the samples");
  await writer(["write", topic, "json", 10, t0(), 1000]);
  await until(() => st.messages.filter((m) => m.subscriptionId === sub).length >= 10, "10 samples over wss");
  const got = st.messages.filter((m) => m.subscriptionId === sub)
    .map((m) => JSON.parse(new TextDecoder().decode(m.data)).text);
  check(got.length === 10 && got[9] === "msg 9", `over wss: ${got.length} of 10 samples, the last '${got[9]}'`);
  st.ws.close();
  const refused = (u, opts) => new Promise((resolve) => {
    const ws = new WebSocket(u, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], opts);
    ws.on("open", () => { ws.close(); resolve("opened"); });
    ws.on("error", (e) => resolve(e.code || e.message));
    ws.on("close", () => resolve("closed"));
  });
  const plain = await refused(url.replace(/^wss:/, "ws:"), {});
  check(plain !== "opened", `a plain ws:// client to the wss server gets no connection (${plain})`);
  const untrusted = await refused(url, {});
  check(untrusted !== "opened", `a wss client not trusting the CA is refused (${untrusted})`);
}

const scenarios = { wss, rostopic, newtopic, control, live, publish, busy, gap, rejoin, recreate, shared, pubgone, structbad, dup, slow, hostile, play, limit, struct: structs, odom, flood, bigadv, steady, advertised };
try {
  await scenarios[scenario](...args);
} catch (e) {
  bad(`${scenario}: ${e.stack}`);
}
process.exit(failed ? 1 : 0);
