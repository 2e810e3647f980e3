#!/usr/bin/env node
// Runs Unicode's bidi conformance tests (BidiTest.txt and BidiCharacterTest.txt, from Debian's
// unicode-data, the same Unicode version as the plugin's tables) against the built plugin's
// algorithm: the resolved levels after L1 and the visual order after L2, per test case.
// Usage: node Tests/rtl/bidi-conformance.js BUILT_PLUGIN.js [UNICODE_DIR]
// Prints the failures (the first few of each file), the counts, and exits 1 when any case fails:
// the plugin passes every case of Unicode 15.0.0's files (docs/rtl-text.md), so a failure is a regression.
'use strict';
const fs = require('fs');
const path = require('path');

const [pluginPath, ucd = '/usr/share/unicode'] = process.argv.slice(2);
if (!pluginPath) {
  console.error('usage: node bidi-conformance.js BUILT_PLUGIN.js [UNICODE_DIR]');
  process.exit(2);
}
const plugin = require(path.resolve(pluginPath));
const { classIds, resolveParagraph, reorderLine, bidiClass } = plugin;
const SHOWN_FAILURES = 10;

// Levels (after L1, 'x' for characters X9 removes) and visual order (without them) of one paragraph on one line.
function run(types, codePoints, direction) {
  const { paragraphLevel, levels } = resolveParagraph(types, codePoints, direction);
  const order = reorderLine(types, levels, paragraphLevel, 0, types.length);
  const removed = (type) => type === classIds.BN || (type >= classIds.LRE && type <= classIds.PDF);
  return {
    paragraphLevel,
    levels: types.map((type, i) => (removed(type) ? 'x' : String(levels[i]))).join(' '),
    order: order.filter((i) => !removed(types[i])).join(' '),
  };
}

function report(name, passed, failed, failures) {
  for (const failure of failures.slice(0, SHOWN_FAILURES)) console.log(`FAIL ${name}: ${failure}`);
  if (failures.length > SHOWN_FAILURES) console.log(`... and ${failures.length - SHOWN_FAILURES} more failures in ${name}`);
  console.log(`${name}: ${passed} passed, ${failed} failed`);
}

// BidiTest.txt: sequences of bidi classes, each run with the paragraph directions of its bitset.
function bidiTest() {
  const lines = fs.readFileSync(path.join(ucd, 'BidiTest.txt'), 'utf8').split('\n');
  let levels = '', order = '', passed = 0, failed = 0;
  const failures = [];
  for (const raw of lines) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    if (line.startsWith('@Levels:')) { levels = line.slice(8).trim().split(/\s+/).join(' '); continue; }
    if (line.startsWith('@Reorder:')) { order = line.slice(9).trim().split(/\s+/).filter(Boolean).join(' '); continue; }
    if (line.startsWith('@')) continue;
    const [input, bits] = line.split(';');
    const names = input.trim().split(/\s+/);
    const types = names.map((name) => classIds[name]);
    const bitset = parseInt(bits.trim(), 16);
    for (const [bit, direction] of [[1, -1], [2, 0], [4, 1]]) {
      if (!(bitset & bit)) continue;
      const got = run(types, null, direction);
      if (got.levels === levels && got.order === order) {
        passed++;
      } else {
        failed++;
        failures.push(`${input.trim()} (direction ${direction}): levels ${got.levels} want ${levels}; order ${got.order} want ${order}`);
      }
    }
  }
  report('BidiTest.txt', passed, failed, failures);
  return [passed, failed];
}

// BidiCharacterTest.txt: code points, with paired brackets, one direction each.
function bidiCharacterTest() {
  const lines = fs.readFileSync(path.join(ucd, 'BidiCharacterTest.txt'), 'utf8').split('\n');
  let passed = 0, failed = 0;
  const failures = [];
  for (const raw of lines) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [input, direction, paragraphLevel, levels, order] = line.split(';').map((field) => field.trim());
    const codePoints = input.split(/\s+/).map((hex) => parseInt(hex, 16));
    const types = codePoints.map(bidiClass);
    const got = run(types, codePoints, direction === '2' ? -1 : Number(direction));
    if (String(got.paragraphLevel) === paragraphLevel && got.levels === levels && got.order === order) {
      passed++;
    } else {
      failed++;
      failures.push(`${input} (direction ${direction}): paragraph ${got.paragraphLevel} want ${paragraphLevel}; levels ${got.levels} want ${levels}; order ${got.order} want ${order}`);
    }
  }
  report('BidiCharacterTest.txt', passed, failed, failures);
  return [passed, failed];
}

const started = Date.now();
const [p1, f1] = bidiTest();
const [p2, f2] = bidiCharacterTest();
console.log(`Unicode ${plugin.unicodeVersion} bidi conformance, ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`bidi: ${p1 + p2} passed, ${f1 + f2} failed`);
process.exit(f1 + f2 === 0 ? 0 : 1);
