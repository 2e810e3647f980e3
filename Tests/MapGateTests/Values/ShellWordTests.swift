import Foundation
import MapGate
import TestSupport
import Testing

/// Commands said to the user are read back by a real shell as the words they were made of.
@Suite struct ShellWordTests {
    @Test(arguments: ["/media/usb", "/tmp/USB DISK", "/tmp/地図 スティック", "it's", "a\"b", "$HOME", "`x`", "back\\slash", ""])
    func aShellReadsTheWordBack(_ word: String) throws {
        let command = "printf '%s' " + ShellWord.quoted(word)
        let result = try runProcess("/bin/sh", ["-c", command])
        #expect(result.status == 0 && result.stdout == word, "\(command) → \(result.stdout)")
    }

    @Test func aPlainWordStaysAsItIs() {
        #expect(ShellWord.command(["mapgate", "sync", "--from", "/media/usb"]) == "mapgate sync --from /media/usb")
        #expect(ShellWord.quoted("/tmp/USB DISK") == "\"/tmp/USB DISK\"")
    }
}
