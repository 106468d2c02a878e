// The memory snapshot as shipped: its heap with the wasm's initial memory
// (the data segments of pyodide.asm.wasm, which the reader downloads anyway)
// XOR-ed out, so the bytes the interpreter never changed compress to nothing:
// 6.7 MB gzipped becomes about 5.2 MB. One implementation for both sides: the
// build (tools/make_snapshot.mjs, under Node) encodes, the worker decodes; the
// operation is its own inverse.
//
//   toggleWasmData(snapshot, wasm)  -> snapshot, changed in place

// LEB128 readers over a byte array, position in `at.pos`.
function unsigned(bytes, at) {
  let result = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at.pos++];
    result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(byte & 0x80)) return result;
  }
}

function signed32(bytes, at) {
  let result = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at.pos++];
    result |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  return shift < 32 && byte & 0x40 ? result | (-1 << shift) : result;
}

const DATA_SECTION = 11;
const I32_CONST = 0x41;
const END = 0x0b;

// Calls visit(address, bytes) for each active data segment of memory 0.
function eachDataSegment(wasm, visit) {
  const view = new DataView(wasm.buffer, wasm.byteOffset, wasm.byteLength);
  if (view.getUint32(0, true) !== 0x6d736100) throw new Error("snapshot delta: not a wasm module");
  const at = { pos: 8 };
  while (at.pos < wasm.length) {
    const id = wasm[at.pos++];
    const size = unsigned(wasm, at);
    const end = at.pos + size;
    if (id === DATA_SECTION) {
      const count = unsigned(wasm, at);
      for (let i = 0; i < count; i++) {
        const flags = unsigned(wasm, at);
        if (flags === 1) {
          at.pos += unsigned(wasm, at); // passive: not in the initial memory
          continue;
        }
        if (flags === 2 && unsigned(wasm, at) !== 0) throw new Error("snapshot delta: a second memory");
        if (flags > 2 || wasm[at.pos++] !== I32_CONST) throw new Error("snapshot delta: a data segment without a constant address");
        const address = signed32(wasm, at);
        if (wasm[at.pos++] !== END) throw new Error("snapshot delta: unexpected offset expression");
        const length = unsigned(wasm, at);
        visit(address, wasm.subarray(at.pos, at.pos + length));
        at.pos += length;
      }
    }
    at.pos = end;
  }
}

// The snapshot's layout (Pyodide 314): a header whose second 32-bit word is
// the offset of the copy of the wasm memory that follows it.
export function toggleWasmData(snapshot, wasm) {
  const heapOffset = new DataView(snapshot.buffer, snapshot.byteOffset, 8).getUint32(4, true);
  const heap = snapshot.subarray(heapOffset);
  eachDataSegment(wasm, (address, bytes) => {
    if (address + bytes.length > heap.length) throw new Error("snapshot delta: a data segment beyond the snapshot's memory");
    for (let i = 0; i < bytes.length; i++) heap[address + i] ^= bytes[i];
  });
  return snapshot;
}
