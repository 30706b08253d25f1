// mcap_open.mjs - open an MCAP file with the npm @mcap/core indexed reader
// (the one Foxglove uses), through its summary, with zstd and lz4 chunk
// support. Shared by tests/bridge/mcap_check.mjs and bench/bridge/mcap_js.mjs.
// NODE_PATH: a node_modules with @mcap/core, fzstd and lz4js
// (bench/bridge/peers.sh node installs them).
import { createRequire } from "node:module";
import { open } from "node:fs/promises";

const require = createRequire(process.env.NODE_PATH + "/");
const { McapIndexedReader } = require("@mcap/core");
const fzstd = require("fzstd");
const lz4 = require("lz4js");

// Returns { reader, close }.
export async function openIndexed(file) {
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
  return { reader, close: () => fh.close() };
}
