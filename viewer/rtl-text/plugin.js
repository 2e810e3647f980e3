// mapgate's right-to-left text plugin for MapLibre GL JS (issue 41; docs/rtl-text.md).
//
// MapLibre draws a label glyph by glyph, in the order of the string it lays out, and knows
// nothing of Arabic joining or of right-to-left order: it leaves both to a plugin that
// `maplibregl.setRTLTextPlugin(url)` has each web worker load with importScripts. The plugin
// calls the worker's `registerRTLTextPlugin({...})` with three functions (MapLibre 5.3.0):
//   applyArabicShaping(text) -> text
//       on every label section when a feature is read, before line breaking;
//   processBidirectionalText(text, lineBreakPoints) -> [line, ...]
//       for a label of one section: each line in visual (left-to-right drawing) order;
//   processStyledBidirectionalText(text, styleIndices, lineBreakPoints) -> [[line, styleIndices], ...]
//       the same for a formatted label: styleIndices has one section index per UTF-16 code unit,
//       and comes back reordered along with the text.
// lineBreakPoints are UTF-16 offsets into text where MapLibre ends a line, ascending, the last one
// being text.length.
//
// This file is the logic only; scripts/build-rtl-plugin puts the tables that
// scripts/generate-rtl-tables writes from the Unicode Character Database in front of it, both in
// one function scope (MAPGATE_RTL_TABLES is not a global of the worker).
//
// Written from UAX #9 (Unicode Bidirectional Algorithm) and The Unicode Standard, 9.2 Arabic
// (cursive joining, rules R1-R7). Rule names in the comments are theirs.

(function (tables) {
  'use strict';

  // ---------------------------------------------------------------------------------------------
  // Decoding the tables (encodings: the docstring of scripts/generate-rtl-tables).

  // "<base-36 length><Letter>..." runs over 0..10FFFF -> sorted run starts and the value of each run,
  // the value mapped through `ids` (the name of the letter's value -> this file's number for it).
  function decodeRuns(text, names, ids) {
    const starts = [];
    const values = [];
    let start = 0;
    let number = '';
    for (const ch of text) {
      if (ch >= 'A' && ch <= 'Z') {
        const id = ids[names[ch.charCodeAt(0) - 65]];
        if (id === undefined) throw new Error('mapgate RTL plugin: unknown value ' + names[ch.charCodeAt(0) - 65]);
        starts.push(start);
        values.push(id);
        start += parseInt(number, 36);
        number = '';
      } else {
        number += ch;
      }
    }
    return { starts: Uint32Array.from(starts), values: Uint8Array.from(values) };
  }

  function lookupRun(runs, codePoint) {
    const starts = runs.starts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle] <= codePoint) low = middle; else high = middle - 1;
    }
    return runs.values[low];
  }

  // "delta,value,delta,value..." -> Map(code point -> code point + value)
  function decodeOffsets(text) {
    const numbers = text ? text.split(',').map((n) => parseInt(n, 36)) : [];
    const map = new Map();
    let code = 0;
    for (let i = 0; i < numbers.length; i += 2) {
      code += numbers[i];
      map.set(code, code + numbers[i + 1]);
    }
    return map;
  }

  // "base:isolated,final,initial,medial;..." -> Map(base -> [isolated, final, initial, medial]), 0 = none
  function decodeForms(text) {
    const map = new Map();
    for (const entry of text.split(';')) {
      const [base, list] = entry.split(':');
      let previous = 0;
      map.set(parseInt(base, 16), list.split(',').map((field) => {
        previous = field === '' ? 0 : field === '+' ? previous + 1 : parseInt(field, 16);
        return previous;
      }));
    }
    return map;
  }

  // ---------------------------------------------------------------------------------------------
  // Bidi classes. Numbers of this file's own (the tables name theirs): LRE..PDF and LRI..PDI are
  // consecutive, which isRemovedByX9 and isNeutralOrIsolate count on.

  const L = 0, R = 1, AL = 2, EN = 3, ES = 4, ET = 5, AN = 6, CS = 7, NSM = 8, BN = 9, B = 10,
    S = 11, WS = 12, ON = 13, LRE = 14, LRO = 15, RLE = 16, RLO = 17, PDF = 18, LRI = 19,
    RLI = 20, FSI = 21, PDI = 22;
  const CLASS_IDS = { L, R, AL, EN, ES, ET, AN, CS, NSM, BN, B, S, WS, ON, LRE, LRO, RLE, RLO, PDF, LRI, RLI, FSI, PDI };

  const bidiClasses = decodeRuns(tables.bidiClasses, tables.bidiClassNames, CLASS_IDS);
  const mirrors = decodeOffsets(tables.mirrors);
  const openingBrackets = decodeOffsets(tables.brackets);           // opening -> its closing bracket
  const closingBrackets = new Set(openingBrackets.values());
  const bracketCanonical = decodeOffsets(tables.bracketCanonical);  // U+2329 -> U+3008, U+232A -> U+3009
  const bidiControls = new Set();
  for (const range of tables.bidiControls.split(',')) {
    const [first, last] = range.split('-').map((n) => parseInt(n, 16));
    for (let c = first; c <= (last === undefined ? first : last); c++) bidiControls.add(c);
  }

  function bidiClass(codePoint) {
    return lookupRun(bidiClasses, codePoint);
  }

  function isIsolateInitiator(type) {
    return type === LRI || type === RLI || type === FSI;
  }

  // X9: embeddings, overrides, PDF and boundary neutrals take no part in the resolution.
  function isRemovedByX9(type) {
    return type === BN || (type >= LRE && type <= PDF);
  }

  // N1, N2: the neutral and isolate formatting characters.
  function isNeutralOrIsolate(type) {
    return type === B || type === S || type === WS || type === ON || type >= LRI;
  }

  // The direction a resolved type counts as in N0 and N1: numbers count as R. -1: none.
  function strongDirection(type) {
    if (type === L) return L;
    if (type === R || type === EN || type === AN) return R;
    return -1;
  }

  const MAX_DEPTH = 125;  // BD2
  const MAX_BRACKET_PAIRS_OPEN = 63;  // BD16

  // BD9: the matching PDI of each isolate initiator, -1 for none (the isolate then ends with the paragraph).
  function matchIsolates(types) {
    const matchingPDI = new Int32Array(types.length).fill(-1);
    const open = [];
    for (let i = 0; i < types.length; i++) {
      if (isIsolateInitiator(types[i])) open.push(i);
      else if (types[i] === PDI && open.length) matchingPDI[open.pop()] = i;
    }
    return matchingPDI;
  }

  // P2, P3: the level of the first strong character in [from, to), skipping isolates; -1 if none.
  function firstStrongLevel(types, from, to, matchingPDI) {
    for (let i = from; i < to; i++) {
      const type = types[i];
      if (type === L) return 0;
      if (type === R || type === AL) return 1;
      if (isIsolateInitiator(type)) {
        if (matchingPDI[i] < 0) return -1;  // the isolate runs to the paragraph's end
        i = matchingPDI[i];
      }
    }
    return -1;
  }

  // Resolves the embedding levels of one paragraph: UAX #9 P2 to I2 (everything before line breaking).
  //   types       original Bidi_Class of each character (this file's numbers)
  //   codePoints  the characters, for paired brackets (N0); null when only classes are known
  //   direction   0 left-to-right, 1 right-to-left, -1 from the text (P2, P3; left-to-right if no strong character)
  // Returns { paragraphLevel, levels }; characters removed by X9 get the level of the character before
  // them (the paragraph's at the start), which lets the caller keep them in the line where they were.
  function resolveParagraph(types, codePoints, direction) {
    const n = types.length;
    const matchingPDI = matchIsolates(types);
    let paragraphLevel = direction;
    if (paragraphLevel < 0) paragraphLevel = Math.max(0, firstStrongLevel(types, 0, n, matchingPDI));

    const levels = new Uint8Array(n);
    const resolved = Uint8Array.from(types);  // the types as the rules change them

    // X1-X8: explicit embeddings, overrides and isolates, with the directional status stack.
    const stackLevel = [paragraphLevel];
    const stackOverride = [-1];  // -1 neutral, else L or R
    const stackIsolate = [false];
    let overflowIsolates = 0, overflowEmbeddings = 0, validIsolates = 0;
    for (let i = 0; i < n; i++) {
      const type = types[i];
      const top = stackLevel.length - 1;
      const level = stackLevel[top];
      if (type === RLE || type === LRE || type === RLO || type === LRO) {  // X2-X5
        const next = type === RLE || type === RLO ? (level + 1) | 1 : (level + 2) & ~1;
        if (next <= MAX_DEPTH && overflowIsolates === 0 && overflowEmbeddings === 0) {
          stackLevel.push(next);
          stackOverride.push(type === RLO ? R : type === LRO ? L : -1);
          stackIsolate.push(false);
        } else if (overflowIsolates === 0) {
          overflowEmbeddings++;
        }
        levels[i] = level;
      } else if (isIsolateInitiator(type)) {  // X5a-X5c
        levels[i] = level;
        if (stackOverride[top] >= 0) resolved[i] = stackOverride[top];
        let rtl = type === RLI;
        if (type === FSI) {
          const end = matchingPDI[i] < 0 ? n : matchingPDI[i];
          rtl = firstStrongLevel(types, i + 1, end, matchingPDI) === 1;
        }
        const next = rtl ? (level + 1) | 1 : (level + 2) & ~1;
        if (next <= MAX_DEPTH && overflowIsolates === 0 && overflowEmbeddings === 0) {
          validIsolates++;
          stackLevel.push(next);
          stackOverride.push(-1);
          stackIsolate.push(true);
        } else {
          overflowIsolates++;
        }
      } else if (type === PDI) {  // X6a
        if (overflowIsolates > 0) {
          overflowIsolates--;
        } else if (validIsolates > 0) {
          overflowEmbeddings = 0;
          while (!stackIsolate[stackIsolate.length - 1]) {
            stackLevel.pop(); stackOverride.pop(); stackIsolate.pop();
          }
          stackLevel.pop(); stackOverride.pop(); stackIsolate.pop();
          validIsolates--;
        }
        const now = stackLevel.length - 1;
        levels[i] = stackLevel[now];
        if (stackOverride[now] >= 0) resolved[i] = stackOverride[now];
      } else if (type === PDF) {  // X7
        if (overflowIsolates > 0) {
          // an isolate that did not fit is still open: the PDF is inside it
        } else if (overflowEmbeddings > 0) {
          overflowEmbeddings--;
        } else if (!stackIsolate[top] && stackLevel.length >= 2) {
          stackLevel.pop(); stackOverride.pop(); stackIsolate.pop();
        }
        levels[i] = level;
      } else if (type === B) {  // X8
        levels[i] = paragraphLevel;
      } else {  // X6 (BN keeps the level too; X9 removes it below)
        levels[i] = level;
        if (type !== BN && stackOverride[top] >= 0) resolved[i] = stackOverride[top];
      }
    }

    // X9: the rest of the resolution sees only the characters that remain.
    const kept = [];
    for (let i = 0; i < n; i++) if (!isRemovedByX9(types[i])) kept.push(i);

    // X10: level runs, chained through matching isolate initiators and PDIs into isolating run sequences.
    const runs = [];
    for (let k = 0; k < kept.length; k++) {
      if (k === 0 || levels[kept[k]] !== levels[kept[k - 1]]) runs.push([]);
      runs[runs.length - 1].push(kept[k]);
    }
    const runStartingAt = new Map();
    runs.forEach((run, r) => runStartingAt.set(run[0], r));
    const continues = new Int32Array(runs.length).fill(-1);  // run -> the run that carries on its sequence
    const continued = new Uint8Array(runs.length);
    runs.forEach((run, r) => {
      const last = run[run.length - 1];
      if (isIsolateInitiator(types[last]) && matchingPDI[last] >= 0 && runStartingAt.has(matchingPDI[last])) {
        const next = runStartingAt.get(matchingPDI[last]);
        continues[r] = next;
        continued[next] = 1;
      }
    });
    const keptPosition = new Int32Array(n).fill(-1);
    kept.forEach((i, k) => { keptPosition[i] = k; });
    const before = Uint8Array.from(resolved);  // the types after X1-X8, before W1: N0 looks for the NSMs
    // sos and eos compare embedding levels: those of X1-X8, not the ones a sequence resolved before has raised.
    const embeddingLevels = Uint8Array.from(levels);

    for (let r = 0; r < runs.length; r++) {
      if (continued[r]) continue;
      let sequence = runs[r];
      for (let next = continues[r]; next >= 0; next = continues[next]) sequence = sequence.concat(runs[next]);
      const first = sequence[0];
      const last = sequence[sequence.length - 1];
      const level = embeddingLevels[first];
      const previousLevel = keptPosition[first] > 0 ? embeddingLevels[kept[keptPosition[first] - 1]] : paragraphLevel;
      const nextLevel = !isIsolateInitiator(types[last]) && keptPosition[last] < kept.length - 1
        ? embeddingLevels[kept[keptPosition[last] + 1]] : paragraphLevel;
      const sos = Math.max(previousLevel, level) & 1 ? R : L;
      const eos = Math.max(nextLevel, level) & 1 ? R : L;
      resolveSequence(sequence, level, sos, eos, resolved, before, levels, codePoints);
    }

    // Removed characters: the level of the character before them, so that they stay where they were.
    for (let i = 0; i < n; i++) {
      if (isRemovedByX9(types[i])) levels[i] = i > 0 ? levels[i - 1] : paragraphLevel;
    }
    return { paragraphLevel, levels };
  }

  // W1-W7, N0-N2, I1-I2 on one isolating run sequence (indices into the paragraph, in order).
  function resolveSequence(sequence, level, sos, eos, resolved, before, levels, codePoints) {
    const n = sequence.length;
    const t = sequence.map((i) => resolved[i]);
    const embedding = level & 1 ? R : L;

    // W1: a nonspacing mark takes the type of the character before it (ON after an isolate boundary).
    for (let k = 0; k < n; k++) {
      if (t[k] !== NSM) continue;
      if (k === 0) t[k] = sos;
      else t[k] = isIsolateInitiator(t[k - 1]) || t[k - 1] === PDI ? ON : t[k - 1];
    }
    // W2: European numbers after Arabic letters are Arabic numbers. W3: AL is R.
    let lastStrong = sos;
    for (let k = 0; k < n; k++) {
      if (t[k] === L || t[k] === R || t[k] === AL) lastStrong = t[k];
      else if (t[k] === EN && lastStrong === AL) t[k] = AN;
    }
    for (let k = 0; k < n; k++) if (t[k] === AL) t[k] = R;
    // W4: one separator between two numbers of the same kind joins them.
    for (let k = 1; k < n - 1; k++) {
      if (t[k] === ES && t[k - 1] === EN && t[k + 1] === EN) t[k] = EN;
      else if (t[k] === CS && (t[k - 1] === EN || t[k - 1] === AN) && t[k + 1] === t[k - 1]) t[k] = t[k - 1];
    }
    // W5: terminators next to a European number belong to it.
    for (let k = 0; k < n; k++) {
      if (t[k] !== ET) continue;
      let end = k;
      while (end < n && t[end] === ET) end++;
      if ((k > 0 && t[k - 1] === EN) || (end < n && t[end] === EN)) for (let j = k; j < end; j++) t[j] = EN;
      k = end - 1;
    }
    // W6: the separators and terminators left over are neutral.
    for (let k = 0; k < n; k++) if (t[k] === ES || t[k] === ET || t[k] === CS) t[k] = ON;
    // W7: European numbers in left-to-right context are L.
    lastStrong = sos;
    for (let k = 0; k < n; k++) {
      if (t[k] === L || t[k] === R) lastStrong = t[k];
      else if (t[k] === EN && lastStrong === L) t[k] = L;
    }

    // N0: a pair of brackets takes the direction of what it encloses, if that is the embedding
    // direction or agrees with the context before the opening bracket.
    if (codePoints) {
      for (const [open, close] of bracketPairs(sequence, t, codePoints)) {
        let inside = -1;
        for (let k = open + 1; k < close; k++) {
          const direction = strongDirection(t[k]);
          if (direction === embedding) { inside = embedding; break; }
          if (direction >= 0) inside = direction;
        }
        if (inside < 0) continue;
        let direction = embedding;
        if (inside !== embedding) {
          let context = sos;
          for (let k = open - 1; k >= 0; k--) {
            if (strongDirection(t[k]) >= 0) { context = strongDirection(t[k]); break; }
          }
          if (context !== embedding) direction = context;
        }
        for (const bracket of [open, close]) {
          t[bracket] = direction;
          // The marks on a bracket follow it (they had become ON with it under W1).
          for (let k = bracket + 1; k < n && before[sequence[k]] === NSM; k++) t[k] = direction;
        }
      }
    }

    // N1: neutrals between two characters of the same direction take it. N2: the rest, the embedding's.
    for (let k = 0; k < n; k++) {
      if (!isNeutralOrIsolate(t[k])) continue;
      let end = k;
      while (end < n && isNeutralOrIsolate(t[end])) end++;
      const leading = k === 0 ? sos : strongDirection(t[k - 1]);
      const trailing = end === n ? eos : strongDirection(t[end]);
      const direction = leading === trailing ? leading : embedding;
      for (let j = k; j < end; j++) t[j] = direction;
      k = end - 1;
    }

    // I1, I2: implicit levels.
    for (let k = 0; k < n; k++) {
      const i = sequence[k];
      if ((level & 1) === 0) {
        if (t[k] === R) levels[i] = level + 1;
        else if (t[k] === AN || t[k] === EN) levels[i] = level + 2;
      } else if (t[k] === L || t[k] === EN || t[k] === AN) {
        levels[i] = level + 1;
      }
      resolved[i] = t[k];
    }
  }

  // BD16: the bracket pairs of a sequence, as positions in it, sorted by opening bracket.
  function bracketPairs(sequence, t, codePoints) {
    const canonical = (c) => bracketCanonical.get(c) || c;
    const open = [];  // [closing bracket it waits for, position]
    const pairs = [];
    for (let k = 0; k < sequence.length; k++) {
      if (t[k] !== ON) continue;
      const c = codePoints[sequence[k]];
      if (openingBrackets.has(c)) {
        if (open.length === MAX_BRACKET_PAIRS_OPEN) break;
        open.push([canonical(openingBrackets.get(c)), k]);
      } else if (closingBrackets.has(c)) {
        const wanted = canonical(c);
        for (let j = open.length - 1; j >= 0; j--) {
          if (open[j][0] === wanted) {
            pairs.push([open[j][1], k]);
            open.length = j;
            break;
          }
        }
      }
    }
    return pairs.sort((a, b) => a[0] - b[0]);
  }

  // L1 and L2 for one line [from, to) of a resolved paragraph: the indices of its characters in
  // visual order, left to right, and (in `levels`) the levels after L1.
  function reorderLine(types, levels, paragraphLevel, from, to) {
    // L1: separators, and whitespace (isolate formatting and removed characters with it) before
    // a separator or at the end of the line, go back to the paragraph level. Original types.
    const trailing = (type) => type === WS || type === LRI || type === RLI || type === FSI || type === PDI || isRemovedByX9(type);
    let atEnd = true;
    for (let i = to - 1; i >= from; i--) {
      const type = types[i];
      if (type === S || type === B) {
        levels[i] = paragraphLevel;
        atEnd = true;
      } else if (atEnd && trailing(type)) {
        levels[i] = paragraphLevel;
      } else {
        atEnd = false;
      }
    }
    // L2: from the highest level down to the lowest odd one, reverse every run at that level or higher.
    const order = [];
    let highest = 0, lowestOdd = 255;
    for (let i = from; i < to; i++) {
      order.push(i);
      highest = Math.max(highest, levels[i]);
      if (levels[i] & 1) lowestOdd = Math.min(lowestOdd, levels[i]);
    }
    for (let level = highest; level >= lowestOdd; level--) {
      for (let k = 0; k < order.length; k++) {
        if (levels[order[k]] < level) continue;
        let end = k;
        while (end < order.length && levels[order[end]] >= level) end++;
        for (let a = k, b = end - 1; a < b; a++, b--) [order[a], order[b]] = [order[b], order[a]];
        k = end;
      }
    }
    return order;
  }

  // ---------------------------------------------------------------------------------------------
  // MapLibre's strings: UTF-16, several paragraphs, lines broken by MapLibre.

  // The visual lines of `text`: each an array of [code unit offset, code point to draw] from left to
  // right, without the bidi formatting characters (they have no glyph), mirrored where L4 says so.
  function visualLines(text, lineBreakPoints) {
    const codePoints = [];
    const offsets = [];  // code unit offset of each code point
    for (let u = 0; u < text.length;) {
      const c = text.codePointAt(u);
      codePoints.push(c);
      offsets.push(u);
      u += c > 0xffff ? 2 : 1;
    }
    const n = codePoints.length;
    const types = codePoints.map(bidiClass);
    const levels = new Uint8Array(n);

    // P1: paragraphs end after each paragraph separator (CR LF counting as one). Each is resolved
    // alone, and a line never crosses the end of one.
    const breaks = new Set();
    const paragraphLevels = new Uint8Array(n);
    for (let start = 0; start < n;) {
      let end = start;
      while (end < n && types[end] !== B) end++;
      if (end < n) end += codePoints[end] === 0x0d && codePoints[end + 1] === 0x0a ? 2 : 1;
      const result = resolveParagraph(types.slice(start, end), codePoints.slice(start, end), -1);
      levels.set(result.levels, start);
      paragraphLevels.fill(result.paragraphLevel, start, end);
      breaks.add(end);
      start = end;
    }
    // MapLibre's breaks are code unit offsets; one inside a surrogate pair moves to after it.
    let k = 0;
    for (const point of lineBreakPoints || []) {
      while (k < n && offsets[k] < point) k++;
      if (k > 0 && k <= n) breaks.add(k);
    }
    breaks.add(n);

    const lines = [];
    let from = 0;
    for (const to of [...breaks].sort((a, b) => a - b)) {
      if (to <= from && n > 0) continue;
      const order = reorderLine(types, levels, paragraphLevels[from] || 0, from, to);
      const line = [];
      for (const i of order) {
        const c = codePoints[i];
        if (bidiControls.has(c)) continue;
        line.push([offsets[i], levels[i] & 1 && mirrors.has(c) ? mirrors.get(c) : c]);
      }
      lines.push(line);
      from = to;
    }
    return lines;
  }

  function processBidirectionalText(text, lineBreakPoints) {
    return visualLines(text, lineBreakPoints).map((line) => String.fromCodePoint(...line.map(([, c]) => c)));
  }

  function processStyledBidirectionalText(text, styleIndices, lineBreakPoints) {
    return visualLines(text, lineBreakPoints).map((line) => {
      let out = '';
      const styles = [];
      for (const [offset, c] of line) {
        const drawn = String.fromCodePoint(c);
        out += drawn;
        // One style index per code unit, as MapLibre keeps them.
        for (let u = 0; u < drawn.length; u++) styles.push(styleIndices[offset + u]);
      }
      return [out, styles];
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Arabic shaping: each letter becomes the presentation form of its position in the word
  // (The Unicode Standard, 9.2: cursive joining R1-R7), lam-alef becomes its ligature.

  const JOINING_IDS = { U: 0, T: 1, R: 2, L: 3, D: 4, C: 5 };
  const J_T = 1, J_R = 2, J_L = 3, J_D = 4, J_C = 5;
  const joiningTypes = decodeRuns(tables.joiningTypes, tables.joiningTypeNames, JOINING_IDS);
  const forms = decodeForms(tables.forms);      // letter -> [isolated, final, initial, medial]
  const lamAlef = decodeForms(tables.lamAlef);  // alef -> the ligature of lam with it, [isolated, final, -, -]
  const ISOLATED = 0, FINAL = 1, INITIAL = 2, MEDIAL = 3;

  function joiningType(codePoint) {
    return lookupRun(joiningTypes, codePoint);
  }

  // Quick exit for the many labels with no letter that joins (Latin, CJK, Hebrew...).
  function hasJoiningLetter(codePoints) {
    for (const c of codePoints) if (forms.has(c)) return true;
    return false;
  }

  function applyArabicShaping(text) {
    const codePoints = Array.from(text, (ch) => ch.codePointAt(0));
    if (!hasJoiningLetter(codePoints)) return text;
    const n = codePoints.length;
    const types = codePoints.map(joiningType);
    // R1: transparent characters (marks) are skipped: each letter's neighbours are the nearest
    // characters that are not transparent.
    const previous = new Int32Array(n).fill(-1);
    const next = new Int32Array(n).fill(-1);
    for (let i = 0, last = -1; i < n; i++) {
      previous[i] = last;
      if (types[i] !== J_T) last = i;
    }
    for (let i = n - 1, last = -1; i >= 0; i--) {
      next[i] = last;
      if (types[i] !== J_T) last = i;
    }
    // Does the character at i join towards the one after it (left, in right-to-left writing), or before it?
    const joinsForward = (i) => i >= 0 && (types[i] === J_D || types[i] === J_L || types[i] === J_C);
    const joinsBackward = (i) => i >= 0 && (types[i] === J_D || types[i] === J_R || types[i] === J_C);

    let out = '';
    for (let i = 0; i < n; i++) {
      const c = codePoints[i];
      const type = types[i];
      const letterForms = forms.get(c);
      if (!letterForms || type === J_T) {
        out += String.fromCodePoint(c);
        continue;
      }
      const right = (type === J_R || type === J_D) && joinsForward(previous[i]);
      // Lam followed by an alef (marks between them allowed) is one letter: their ligature, which
      // joins on the right like the lam, never on the left, like the alef. The marks follow it.
      if (c === tables.lam && next[i] >= 0 && lamAlef.has(codePoints[next[i]])) {
        const ligature = lamAlef.get(codePoints[next[i]])[right ? FINAL : ISOLATED];
        if (ligature) {
          out += String.fromCodePoint(ligature);
          for (let j = i + 1; j < next[i]; j++) out += String.fromCodePoint(codePoints[j]);
          i = next[i];
          continue;
        }
      }
      const left = (type === J_L || type === J_D) && joinsBackward(next[i]);
      const position = right && left ? MEDIAL : right ? FINAL : left ? INITIAL : ISOLATED;  // R2-R7
      // A form Unicode does not encode: the letter stays as it is (the font draws it isolated).
      out += String.fromCodePoint(letterForms[position] || c);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------

  const plugin = { applyArabicShaping, processBidirectionalText, processStyledBidirectionalText };
  // In MapLibre's worker: hand the functions over. Elsewhere (node, for the tests) there is nothing to call.
  if (typeof globalThis.registerRTLTextPlugin === 'function') globalThis.registerRTLTextPlugin(plugin);
  // Node: the tests reach the algorithm's parts (conformance tests give classes, not text).
  if (typeof module === 'object' && module && module.exports) {
    module.exports = Object.assign({}, plugin, {
      unicodeVersion: tables.unicodeVersion,
      classIds: CLASS_IDS,
      bidiClass,
      joiningType,
      resolveParagraph,
      reorderLine,
      mirror: (c) => mirrors.get(c),
    });
  }
})(MAPGATE_RTL_TABLES);
