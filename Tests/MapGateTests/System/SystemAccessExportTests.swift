import MapGate
import Testing

/// `export` in the service's one table of who may ask for what (issue 39): every user may, as for
/// `tile`; the archive goes to standard output only, a file named for the service is refused.
@Suite struct SystemAccessExportTests {
    @Test func exportIsServedToEveryUserWithStandardOutputOnly() {
        #expect(SystemAccess.isServed("export"))
        #expect(SystemAccess.check(command: "export", options: [:], isAdministrator: false, positional: ["plain", "-"]) == nil)
        #expect(SystemAccess.check(command: "export", options: [:], isAdministrator: false, positional: ["plain", "/tmp/x.pmtiles"]) == SystemRefusal(.destination, "/tmp/x.pmtiles"))
        #expect(SystemRefusal(.destination, "x").kind == .usage)
    }
}
