#!/usr/bin/env node
// The built RTL plugin as MapLibre GL JS 5.3.0's worker uses it: registration when the worker runs
// the file with importScripts, and the three functions on labels (shaping, lines, styled lines).
// Usage: node Tests/rtl/plugin-tests.js BUILT_PLUGIN.js
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const pluginPath = process.argv[2];
if (!pluginPath) {
  console.error('usage: node plugin-tests.js BUILT_PLUGIN.js');
  process.exit(2);
}
const source = fs.readFileSync(pluginPath, 'utf8');
const plugin = require(path.resolve(pluginPath));

let passed = 0, failed = 0;
function check(name, got, want) {
  const a = JSON.stringify(got), b = JSON.stringify(want);
  if (a === b) { passed++; return; }
  failed++;
  console.log(`FAIL ${name}\n  got  ${a}\n  want ${b}`);
}
const hex = (text) => Array.from(text, (ch) => ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')).join(' ');
const shape = (text) => hex(plugin.applyArabicShaping(text));
const lines = (text, breaks) => plugin.processBidirectionalText(text, breaks || [text.length]);

// Registration: MapLibre's worker defines self.registerRTLTextPlugin, then importScripts the file
// (a classic script in the worker's global scope; no `module`). The plugin must call it once with the
// three functions, and leave nothing else in the global scope.
{
  const calls = [];
  const context = vm.createContext({ registerRTLTextPlugin: (methods) => calls.push(methods) });
  const before = Object.keys(context).sort();
  vm.runInContext(source, context);
  check('registers once', calls.length, 1);
  check('registers the three functions', Object.keys(calls[0] || {}).sort(),
    ['applyArabicShaping', 'processBidirectionalText', 'processStyledBidirectionalText']);
  check('the functions are functions', Object.values(calls[0] || {}).map((f) => typeof f), ['function', 'function', 'function']);
  check('no globals left behind', Object.keys(context).sort(), before);
  check('registered functions work', calls[0].processBidirectionalText('אב', [2]), ['בא']);
}

// Shaping: joining forms by position, from the joining types.
check('Cairo', shape('القاهرة'), 'FE8D FEDF FED8 FE8E FEEB FEAE FE93');
check('Tehran: alef after reh is isolated, reh does not join on the left', shape('تهران'), 'FE97 FEEC FEAE FE8D FEE5');
check('Persian yeh and keheh', shape('کیش'), 'FB90 FBFF FEB6');
check('isolated letter', shape('ب'), 'FE8F');
check('final after a right-joining letter is isolated: dal then beh', shape('دب'), 'FEA9 FE8F');
check('lam-alef, isolated', shape('لا'), 'FEFB');
check('lam-alef, final', shape('سلام'), 'FEB3 FEFC FEE1');
check('lam-alef with hamza above and below, madda', shape('لأ لإ لآ'), 'FEF7 0020 FEF9 0020 FEF5');
check('lam-alef with a mark between: the mark follows the ligature', shape('لَا'), 'FEFB 064E');
check('no optional ligatures: ALLAH is not U+FDF2', shape('الله'), 'FE8D FEDF FEE0 FEEA');
check('marks are transparent', shape('بَب'), 'FE91 064E FE90');
check('tatweel joins on both sides', shape('ـبـ'), '0640 FE92 0640');
check('ZWJ joins', shape('ب\u200d'), 'FE91 200D');
check('ZWNJ breaks the join', shape('خرم\u200cآباد'), 'FEA7 FEAE FEE1 200C FE81 FE91 FE8E FEA9');
check('a letter without presentation forms stays, its neighbours join to it', shape('ب\u08a0ب'), 'FE91 08A0 FE90');
check('alef maksura initial and medial (FBE8, FBE9)', shape('ىىى'), 'FBE8 FBE9 FEF0');
check('Hebrew, Latin, digits unchanged', plugin.applyArabicShaping('ירושלים Jerusalem 12'), 'ירושלים Jerusalem 12');
check('empty', plugin.applyArabicShaping(''), '');

// Visual order, one line.
check('Hebrew reversed', lines('ירושלים'), ['םילשורי']);
check('Arabic with European digits', lines('شارع 26 يوليو'), ['ويلوي 26 عراش']);
check('Arabic-Indic digits', lines('شارع ٢٦ يوليو'), ['ويلوي ٢٦ عراش']);
check('Persian digits (EN) after Persian letters', lines('خیابان ۱۶ آذر'), ['رذآ ۱۶ نابایخ']);
check('paragraph level from the first strong letter: RTL', lines('القاهرة (Cairo)'), ['(Cairo) ةرهاقلا']);
check('paragraph level from the first strong letter: LTR', lines('Cairo (القاهرة)'), ['Cairo (ةرهاقلا)']);
check('no strong letter: left to right', lines('(12)'), ['(12)']);
check('brackets mirrored in RTL runs (L4)', lines('שער (יפו)'), ['(ופי) רעש']);
check('brackets of an RTL run inside LTR text mirrored', lines('a (אב) b'), ['a (בא) b']);
check('bidi controls dropped', lines('a\u202bאב\u202c\u200fc'), ['aבאc']);
check('isolates', lines('\u2067Cairo\u2069 القاهرة'), ['ةرهاقلا Cairo']);
check('surrogate pairs stay whole in RTL runs', lines('א😀ב'), ['ב😀א']);
check('empty text', lines('', [0]), ['']);

// Several lines: MapLibre's breaks are UTF-16 offsets, the last being text.length; each line is
// reordered alone (L1: trailing spaces at the paragraph level), lines stay in logical order.
// (In a right-to-left paragraph a line's trailing space is at its visual end, the left; MapLibre trims it.)
check('lines reordered one by one', lines('مدينة نصر الجديدة', [6, 10, 17]), [' ةنيدم', ' رصن', 'ةديدجلا']);
check('mixed lines', lines('Cairo القاهرة 2024', [6, 14, 18]), ['Cairo ', 'ةرهاقلا ', '2024']);
check('a paragraph separator ends a line and a paragraph', lines('abc\nאבג', [7]), ['abc\n', 'גבא']);
check('a second paragraph finds its own direction', lines('אב\ncd', [5]), ['\nבא', 'cd']);
check('CR LF is one separator', lines('אב\r\nגד', [6]), ['\n\rבא', 'דג']);
check('a break inside a surrogate pair moves after it', lines('א😀ב', [2, 4]), ['😀א', 'ב']);

// Styled text: one style index per UTF-16 code unit, carried along with the text.
check('styled', plugin.processStyledBidirectionalText('abc אבג', [0, 0, 0, 0, 1, 1, 2], [4, 7]),
  [['abc ', [0, 0, 0, 0]], ['גבא', [2, 1, 1]]]);
check('styled, surrogate pair and a dropped control', plugin.processStyledBidirectionalText('א😀\u200fב', [0, 1, 1, 2, 3], [5]),
  [['ב😀א', [3, 1, 1, 0]]]);
check('styled, mirrored bracket keeps its style', plugin.processStyledBidirectionalText('א(ב)', [0, 1, 2, 3], [4]),
  [['(ב)א', [3, 2, 1, 0]]]);

console.log(`plugin: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
