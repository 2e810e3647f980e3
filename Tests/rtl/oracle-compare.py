#!/usr/bin/env python3
"""Compares mapgate's RTL text plugin with two independent implementations on real place names.

Usage: Tests/rtl/oracle-compare.py BUILT_PLUGIN.js [PLACE_NAMES]

Oracles (PyPI, pinned in scripts/install-deps, unpacked in /usr/local/lib/mapgate-test-tools/python):
  arabic-reshaper 3.1.0  the Arabic presentation forms of each name. Configured to the plugin's
                         scope: marks kept (its default deletes them) and, of the ligatures, only the
                         four mandatory lam-alef ones (its default also makes ALLAH, U+FDF2).
  python-bidi 0.6.12     the visual order (its get_display wraps the Rust crate unicode-bidi). It does
                         not mirror (UAX #9 L4), so brackets are compared up to mirroring; the names
                         where the plugin mirrors are counted apart.
Both see the same text: the visual order is compared on the plugin's shaped text, so that a shaping
difference does not count twice.

Every disagreement must be one of KNOWN_DIFFERENCES below, each with the reason the plugin's output is
the standard's (docs/rtl-text.md); any other fails the run, as does an agreement count below EXPECTED.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, "/usr/local/lib/mapgate-test-tools/python")
try:
    import arabic_reshaper
    from bidi import get_display
except ImportError as error:
    sys.exit(f"oracle-compare: {error}: scripts/install-deps installs arabic-reshaper and python-bidi")

# name -> why the oracle is wrong there, by UAX #9 or The Unicode Standard 9.2 (docs/rtl-text.md).
# Empty: on these names the two agree with the plugin wherever the plugin follows the standard; the
# differences the oracles do have (no L4 mirroring, their defaults) are counted and explained below.
KNOWN_DIFFERENCES = {
}
# The agreement counts this version reaches on place-names.txt; fewer is a regression.
EXPECTED = {"shaping": 425, "order": 425}

NODE_SIDE = r"""
const plugin = require(process.argv[1]);
const names = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = names.map((name) => {
  const shaped = plugin.applyArabicShaping(name);
  const lines = plugin.processBidirectionalText(shaped, [shaped.length]);
  return { shaped, visual: lines.join('\n') };
});
process.stdout.write(JSON.stringify({ out, mirrors: Object.fromEntries(
  [...new Set(names.join(''))].map((ch) => [ch, plugin.mirror(ch.codePointAt(0))]).filter(([, m]) => m)
    .map(([ch, m]) => [ch, String.fromCodePoint(m)])) }));
"""

BIDI_CONTROLS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def codes(text):
    return " ".join(f"{ord(ch):04X}" for ch in text)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: oracle-compare.py BUILT_PLUGIN.js [PLACE_NAMES]")
    plugin = os.path.abspath(sys.argv[1])
    names_path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "place-names.txt")
    with open(names_path, encoding="utf-8") as handle:
        names = [line.strip() for line in handle if line.strip() and not line.startswith("#")]

    result = subprocess.run(["node", "-e", NODE_SIDE, plugin], input=json.dumps(names),
                            capture_output=True, text=True, check=True)
    answer = json.loads(result.stdout)
    ours, mirrors = answer["out"], answer["mirrors"]

    configuration = {name: False for name in arabic_reshaper.reshaper_config.default_config
                     if name.startswith("ARABIC LIGATURE") or name == "RIAL SIGN"}
    configuration.update({
        "delete_harakat": False,
        "support_ligatures": True,
        "ARABIC LIGATURE LAM WITH ALEF": True,
        "ARABIC LIGATURE LAM WITH ALEF WITH HAMZA ABOVE": True,
        "ARABIC LIGATURE LAM WITH ALEF WITH HAMZA BELOW": True,
        "ARABIC LIGATURE LAM WITH ALEF WITH MADDA ABOVE": True,
    })
    reshaper = arabic_reshaper.ArabicReshaper(configuration=configuration)

    def fold(text):
        """Brackets up to mirroring: each mirrored pair is written as the lower of its two characters."""
        return "".join(min(ch, mirrors.get(ch, ch)) for ch in text if ch not in BIDI_CONTROLS)

    agree = {"shaping": 0, "order": 0}
    mirrored = 0
    unexplained = []
    explained = []
    for name, mine in zip(names, ours):
        oracle_shaped = reshaper.reshape(name)
        if oracle_shaped == mine["shaped"]:
            agree["shaping"] += 1
        else:
            report = f"shaping {name}: plugin {codes(mine['shaped'])}, arabic-reshaper {codes(oracle_shaped)}"
            (explained if name in KNOWN_DIFFERENCES else unexplained).append(report)
        oracle_visual = "".join(ch for ch in get_display(mine["shaped"]) if ch not in BIDI_CONTROLS)
        if fold(oracle_visual) == fold(mine["visual"]):
            agree["order"] += 1
            if oracle_visual != mine["visual"]:
                mirrored += 1
        else:
            report = f"order {name}: plugin {mine['visual']!r}, python-bidi {oracle_visual!r}"
            (explained if name in KNOWN_DIFFERENCES else unexplained).append(report)

    # For the record: arabic-reshaper as it comes (it deletes vowel marks and makes the optional
    # ALLAH ligature), and python-bidi's raw output (no mirroring).
    default_agree = sum(arabic_reshaper.reshape(name) == mine["shaped"] for name, mine in zip(names, ours))

    for report in explained:
        name = report.split(": ")[0].split(" ", 1)[1]
        print(f"known: {report}\n       ({KNOWN_DIFFERENCES[name]})")
    for report in unexplained:
        print(f"FAIL {report}")
    total = len(names)
    print(f"shaping: {agree['shaping']} of {total} names as arabic-reshaper configured to the plugin's scope "
          f"({default_agree} with its default configuration, which deletes vowel marks and makes the ALLAH ligature)")
    print(f"order: {agree['order']} of {total} names as python-bidi, brackets compared up to mirroring "
          f"({total - (agree['order'] - mirrored)} differ in the raw strings: the plugin mirrors brackets in "
          f"right-to-left runs, as UAX #9 L4 says, python-bidi does not)")
    regressions = [key for key in EXPECTED if agree[key] < EXPECTED[key]]
    for key in regressions:
        print(f"FAIL {key}: {agree[key]} agree, {EXPECTED[key]} expected")
    failed = len(unexplained) + len(regressions)
    print(f"oracle: {2 * total - len(unexplained)} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
