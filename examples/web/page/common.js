// Shared by both pages: the input, the WebNN context, the expected output (expected.json, the
// native run, written beside the pages by run.sh) and what the page shows.

/** The tiny model's input (examples/src/model.rs's INPUT). */
export const X = [0.5, -1.0, 2.0, 0.25];

const $ = (id) => document.getElementById(id);

/** The bit patterns of a Float32Array, as 8 hex digits each. */
export function bitsOf(values) {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  return Array.from(bits, (b) => b.toString(16).padStart(8, "0"));
}

export async function createContext() {
  if (!navigator.ml) throw new Error("this browser has no WebNN (navigator.ml is undefined)");
  return navigator.ml.createContext({ deviceType: "cpu" });
}

/** The native run's {x, y, yBits}, or null when the page is served without expected.json. */
export async function expected() {
  try {
    const response = await fetch("./expected.json", { cache: "no-store" });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

export function status(text) {
  $("status").textContent = text;
}

export function progress(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("progress").append(li);
}

/** Shows x, y and the comparison with the native run; returns whether y equals it bit for bit. */
export function showResult(x, y, native) {
  const bits = bitsOf(y);
  $("x").textContent = `[${x.join(", ")}]`;
  $("y").textContent = `[${Array.from(y).join(", ")}]  (bits ${bits.join(" ")})`;
  if (native === null) {
    $("native").textContent = "no expected.json beside the page (run.sh writes it)";
    return null;
  }
  const same = native.yBits.length === bits.length && native.yBits.every((b, i) => b === bits[i]);
  $("native").textContent = `[${native.y.join(", ")}]  (bits ${native.yBits.join(" ")}): ${same ? "equal bit for bit" : "DIFFERENT"}`;
  return same;
}

/** Fills a table with rows of cells. */
export function table(id, rows) {
  const body = $(id);
  for (const row of rows) {
    const tr = document.createElement("tr");
    for (const cell of row) {
      const td = document.createElement("td");
      td.textContent = String(cell);
      tr.append(td);
    }
    body.append(tr);
  }
}

/** Reports to the test harness (window.__result / __error, then __done) and the page. */
export function done(result, error) {
  if (error !== undefined) {
    status(`error: ${error?.message ?? error}`);
    window.__error = String(error?.stack ?? error);
  } else {
    window.__result = result;
  }
  window.__done = true;
}
