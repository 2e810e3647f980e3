import Foundation
import TestSupport
import Testing

/// Issue 41: the right-to-left text plugin against Unicode's own conformance tests (`BidiTest.txt`,
/// `BidiCharacterTest.txt`: every case must pass), its own checks of what MapLibre's worker calls,
/// and real place names against python's `arabic-reshaper` and `python-bidi` (`scripts/test-rtl`,
/// in node and python: the plugin is JavaScript).
@Suite struct RTLTextPluginTests {
    @Test func theConformanceTestsAndTheOraclesPass() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") else {
            throw MissingFixture(path: "/usr/bin/node (Debian package nodejs; scripts/install-deps installs it)")
        }
        let result = try runProcess(TestPaths.repository + "/scripts/test-rtl", [], timeout: 300)
        #expect(result.status == 0, "\(result.stdout.suffix(3000)) \(result.stderr.suffix(2000))")
        // Every case of Unicode 15.0's two files, and every name.
        #expect(result.stdout.contains("bidi: 861948 passed, 0 failed"), "\(result.stdout.suffix(2000))")
        #expect(result.stdout.contains("oracle: 850 passed, 0 failed"), "\(result.stdout.suffix(2000))")
    }
}
