import Foundation
import MapGate
@testable import mapgate
import TestSupport
import Testing

/// A mistyped command or option is answered with the one it was near (found by an attack: `synk`
/// and `--form` got "unknown", with no word of `sync` or `--from`), and a command typed with an
/// input method's full-width letters (`ｓｙｎｃ`) is the command, as a region's id is.
@Suite struct SuggestionTests {
    @Test(arguments: [
        ("synk", "sync"), ("tiel", "tile"), ("statsu", "status"), ("verfy", "verify"), ("mirorr", "mirror"), ("SYNK", "sync"),
    ])
    func aSlipNamesTheCommand(_ typed: String, _ meant: String) {
        #expect(Suggestion.closest(to: typed, among: ["sync", "tile", "status", "verify", "mirror", "list", "open", "serve"]) == meant)
    }

    /// Nothing near enough, or two as near: no guess.
    @Test(arguments: ["xyz", "dance", "lit"])
    func noGuessWhenNothingIsNearOrTwoAre(_ typed: String) {
        #expect(Suggestion.closest(to: typed, among: ["sync", "tile", "list", "lint"]) == nil)
    }

    @Test func theBinarySaysWhatWasMeant() throws {
        let work = try TemporaryDirectory()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure([:])
        let command = try mapgate.run(["synk", "geo"])
        #expect(command.status == 64 && command.stderr.contains("unknown command 'synk'; did you mean 'sync'?"), "\(command.stderr)")
        let option = try mapgate.run(["sync", "--form", "/media/stick"])
        #expect(option.status == 64 && option.stderr.contains("unknown option --form; did you mean --from?"), "\(option.stderr)")
        let wide = try mapgate.run(["ｌｉｓｔ", "--json"])
        #expect(wide.status == 0, "\(wide.stderr)|\(wide.stdout)")
    }

    /// Found by the language attack of 2026-12-06: an option typed in full-width forms was an
    /// "unexpected argument", `help ｓｙｎｃ` and `help Sync` were no topic and `help synk` got no
    /// guess, and a full-width space (which the shell does not split at) went unsaid.
    @Test func whatAnInputMethodTypesIsReadOrSaid() throws {
        let work = try TemporaryDirectory()
        let mapgate = try MapGateBinary(workDirectory: work.path)
        try mapgate.configure([:])
        for option in ["－－json", "--ｊｓｏｎ", "－－ｊｓｏｎ"] {
            let shown = try mapgate.run(["status", option])
            #expect(shown.status == 0 && shown.stdout.hasPrefix("{"), "\(option): \(shown.stderr)|\(shown.stdout)")
        }
        // A value after "=" is the user's, as typed.
        let value = try mapgate.run(["sync", "－－ｆｒｏｍ＝／ｎｏｗｈｅｒｅ"])
        #expect(value.status != 0 && value.stderr.contains("／ｎｏｗｈｅｒｅ"), "\(value.stderr)")
        for topic in ["ｓｙｎｃ", "Sync"] {
            let help = try mapgate.run(["help", topic])
            #expect(help.status == 0 && help.stdout.hasPrefix("mapgate sync: "), "\(topic): \(help.stderr)")
        }
        let slip = try mapgate.run(["help", "synk"])
        #expect(slip.status == 64 && slip.stderr.contains("no help topic 'synk'; did you mean 'sync'?"), "\(slip.stderr)")
        for arguments in [["list\u{3000}--json"], ["list", "--json\u{3000}-q"], ["help", "sync\u{3000}"]] {
            let spaced = try mapgate.run(arguments)
            #expect(spaced.status == 64 && spaced.stderr.contains("full-width space, U+3000"), "\(arguments): \(spaced.stderr)")
        }
    }
}
