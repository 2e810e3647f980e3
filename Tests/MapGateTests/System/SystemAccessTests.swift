import Foundation
import MapGate
import TestSupport
import Testing

/// Who may ask the system service for what (issue 36): the one table, and the policy keys that turn
/// system mode on.
@Suite struct SystemAccessTests {
    @Test(arguments: ["list", "status", "check", "catalog", "verify", "tile", "open", "serve"])
    func everyUserViews(_ command: String) {
        #expect(SystemAccess.check(command: command, options: [:], isAdministrator: false) == nil)
    }

    @Test(arguments: ["sync", "remove"])
    func onlyAdministratorsChange(_ command: String) {
        #expect(SystemAccess.check(command: command, options: [:], isAdministrator: false) == SystemRefusal(.administrator, command))
        #expect(SystemAccess.check(command: command, options: [:], isAdministrator: true) == nil)
        let named = SystemAccess.check(command: command, options: [:], isAdministrator: false, group: "mapadmins")
        #expect(named?.errorDescription?.contains("members of the group mapadmins ") == true, "\(String(describing: named))")
    }

    /// `mirror` hands the machine's maps over whole: administrators only, and only through the
    /// socket whose other end (the caller's own process) writes the folder.
    @Test func onlyAdministratorsMirrorAndOnlyThroughTheirSocket() {
        #expect(SystemAccess.check(command: "mirror", options: [:], isAdministrator: false, passed: .socket) == SystemRefusal(.handsOver, "mirror"))
        #expect(SystemAccess.check(command: "mirror", options: [:], isAdministrator: true, passed: .socket) == nil)
        #expect(SystemAccess.check(command: "mirror", options: [:], isAdministrator: true)?.reason == .request, "no socket came")
        #expect(SystemAccess.check(command: "mirror", options: [:], isAdministrator: true, passed: .folder)?.reason == .option)
        #expect(SystemAccess.check(command: "list", options: [:], isAdministrator: true, passed: .socket)?.reason == .request)
    }

    @Test(arguments: ["publish", "demo", "system-service", "help", "nosuch"])
    func otherCommandsAreNotTheServices(_ command: String) {
        #expect(SystemAccess.check(command: command, options: [:], isAdministrator: true)?.reason == .command)
    }

    @Test func noCommandIsRefused() {
        #expect(SystemAccess.check(command: nil, options: [:], isAdministrator: true)?.reason == .command)
    }

    /// Options naming files are refused even to root: the service opens nothing a caller names.
    @Test(arguments: [
        ("list", "data-dir"), ("status", "config"), ("sync", "from"), ("serve", "share"), ("tile", "output"), ("open", "browser"),
    ])
    func optionsThatNameFilesAreRefusedToEveryone(_ command: String, _ option: String) {
        #expect(SystemAccess.check(command: command, options: [option: "/tmp/x"], isAdministrator: true) == SystemRefusal(.option, option))
    }

    /// `sync --from`: a mirror's URL, or the folder the caller opened and passed; never a path.
    @Test func aMirrorIsAURLOrThePassedFolder() {
        #expect(SystemAccess.check(command: "sync", options: ["from": "http://192.168.1.20:8080"], isAdministrator: true) == nil)
        #expect(SystemAccess.check(command: "sync", options: ["from": SystemAccess.passedFolder], isAdministrator: true, passed: .folder) == nil)
        #expect(SystemAccess.check(command: "sync", options: ["from": SystemAccess.passedFolder], isAdministrator: true)?.reason == .option, "no folder came")
        #expect(SystemAccess.check(command: "sync", options: ["from": "/media/usb"], isAdministrator: true, passed: .folder)?.reason == .option)
        #expect(SystemAccess.check(command: "sync", options: [:], isAdministrator: true, passed: .folder)?.reason == .option, "a folder nobody asked for")
        #expect(SystemAccess.check(command: "sync", options: ["from": "file:///media/usb"], isAdministrator: true)?.reason == .option)
    }

    @Test func standardOutputIsNotAFile() {
        #expect(SystemAccess.check(command: "tile", options: ["output": "-"], isAdministrator: false) == nil)
        #expect(SystemAccess.check(command: "tile", options: ["output": "/tmp/t.png"], isAdministrator: false)?.reason == .option)
    }

    /// The machine has one tile server, set by its policy: no session, an administrator's neither,
    /// sets up one of its own.
    @Test func theTileServerIsTheMachines() {
        for administrator in [false, true] {
            #expect(SystemAccess.check(command: "serve", options: ["host": "0.0.0.0"], isAdministrator: administrator) == SystemRefusal(.machineServer, "host"))
            #expect(SystemAccess.check(command: "open", options: ["allow-host": "maps.lan"], isAdministrator: administrator)?.reason == .machineServer)
            #expect(SystemAccess.check(command: "serve", options: ["port": "0", "tile-cache": "0"], isAdministrator: administrator) == SystemRefusal(.machineServer, "port"))
            #expect(SystemAccess.check(command: "serve", options: [:], isAdministrator: administrator) == nil)
            #expect(SystemAccess.check(command: "open", options: ["json": ""], isAdministrator: administrator) == nil)
        }
        #expect(SystemAccess.check(command: "tile", options: ["port": "1"], isAdministrator: false) == nil, "only the sessions' commands")
    }

    /// Only the passed variables reach the command, without control characters.
    @Test func theRequestCarriesOnlyDisplayVariables() {
        let request = SystemRequest(
            arguments: ["list"],
            environment: ["LANG": "ja_JP.UTF-8", "LD_PRELOAD": "/x.so", "MAPGATE_DATA_DIR": "/tmp", "XDG_STATE_HOME": "/tmp", "FAKETIME": "-1d", "TERM": "xterm\u{1b}]0;x"])
        #expect(request.environment.keys.sorted() == ["LANG", "TERM"])
        #expect(request.safeEnvironment == ["LANG": "ja_JP.UTF-8"])
        // A hostile client sends what it likes: the service filters again.
        var forged = request
        forged.environment["LD_PRELOAD"] = "/x.so"
        #expect(forged.safeEnvironment == ["LANG": "ja_JP.UTF-8"])
    }

    /// Values are names, never paths: a locale, language or time zone naming a file of the
    /// caller's would have the service's process load it (a locale, a message catalog whose
    /// format strings it would use, a zone file).
    @Test(arguments: [
        ("LANG", "/tmp/evil"), ("LC_ALL", "../../tmp/x"), ("LANGUAGE", "ja:../../../tmp/po"), ("LC_MESSAGES", "C.UTF-8/x"),
        ("TZ", "/etc/shadow"), ("TZ", ":/tmp/zone"), ("TZ", "Asia/../../tmp/z"), ("TERM", "xterm;rm"), ("COLUMNS", "80x"), ("COLUMNS", "٨٠"),
    ])
    func pathsInTheVariablesAreDropped(_ name: String, _ value: String) {
        let request = SystemRequest(arguments: ["list"], environment: [name: value])
        #expect(request.safeEnvironment[name] == nil, "\(name)=\(value)")
    }

    @Test func ordinaryValuesPass() {
        let values = ["LANG": "zh_TW.UTF-8", "LANGUAGE": "ja:en", "LC_ALL": "ko_KR.UTF-8", "LC_CTYPE": "C.UTF-8", "TZ": "Asia/Tokyo", "TERM": "xterm-256color", "COLUMNS": "120", "NO_COLOR": "1"]
        #expect(SystemRequest(arguments: [], environment: values).safeEnvironment == values)
    }

    /// `"mode": "system"` only tightens, so an unsigned policy may set it; once the profile is in
    /// system mode, leaving it (or moving its service) loosens.
    @Test func systemModeOnlyTightens() throws {
        let profile = GateSettings()
        var system = profile
        system.mode = .system
        system.systemSocket = "/tmp/s.sock"
        #expect(system.loosenedKeys(comparedTo: profile).isEmpty)
        #expect(Set(profile.loosenedKeys(comparedTo: system)) == ["mode", "systemSocket"])
    }

    @Test func thePolicyReadsTheModeKeys() throws {
        let settings = try ManagedPolicy.parse(
            Data(#"{"mode": "system", "systemSocket": "/run/x/s.sock", "systemUser": "maps"}"#.utf8), path: "p.json", over: GateSettings())
        #expect(settings.mode == .system && settings.systemSocket == "/run/x/s.sock" && settings.systemUser == "maps")
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.parse(Data(#"{"mode": "machine"}"#.utf8), path: "p.json", over: GateSettings()) }
        #expect(throws: ConfigurationError.self) { try ManagedPolicy.parse(Data(#"{"systemSocket": "relative.sock"}"#.utf8), path: "p.json", over: GateSettings()) }
    }
}
