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
}
