// mcap_channels.mjs FILE - the channels of an MCAP file as the npm
// @mcap/core indexed reader sees them, one line per channel by id:
// "topic schema_name message_encoding sha1(metadata offered_qos_profiles)".
// Run with NODE_PATH as mcap_open.mjs says.
import { createHash } from "node:crypto";
import { openIndexed } from "./mcap_open.mjs";

const { reader, close } = await openIndexed(process.argv[2]);
for (const ch of [...reader.channelsById.values()].sort((a, b) => a.id - b.id)) {
  const schema = reader.schemasById.get(ch.schemaId);
  const qos = ch.metadata.get("offered_qos_profiles");
  console.log(`${ch.topic} ${schema ? schema.name : "-"} ${ch.messageEncoding} ` +
              `${qos === undefined ? "-" : createHash("sha1").update(qos).digest("hex")}`);
}
await close();
