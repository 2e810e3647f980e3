import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 37, part 2: a use counted by a run without a terminal (the packaged user service, a
/// timer's sync) is in the journal at notice priority (`<5>` before each line of the prompt, which
/// journald reads as the priority), and where the user's session has a desktop, on it as a
/// notification (libnotify, opened when needed). The desktop here is a private session bus with
/// a notification server of the test's own (python's dbus), which writes what it is sent.
@Suite struct ServiceNotificationTests {
    static let fakeServer = """
        import sys, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        out = open(sys.argv[1], "a")
        class Notifications(dbus.service.Object):
            @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
            def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
                out.write(app + "\\t" + summary + "\\t" + body.replace("\\n", " | ") + "\\n"); out.flush(); return 1
            @dbus.service.method("org.freedesktop.Notifications", out_signature="as")
            def GetCapabilities(self): return ["body"]
            @dbus.service.method("org.freedesktop.Notifications", out_signature="ssss")
            def GetServerInformation(self): return ("test", "mapgate", "1", "1.2")
        name = dbus.service.BusName("org.freedesktop.Notifications", dbus.SessionBus())
        Notifications(dbus.SessionBus(), "/org/freedesktop/Notifications")
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    /// Runs `tile` in the prompting workspace as a service would: stderr the journal stream.
    func runAsService(_ workspace: CLIWorkspace, environment: [String: String]) throws -> ProcessResult {
        let mapgate = workspace.mapgate
        let script = #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec /usr/bin/faketime "$0" "$@""#
        return try runProcess(
            "/bin/sh",
            ["-c", script, CLIWorkspace.duringPrompts, mapgate.path, "tile", "plain", "0", "0", "0", "-o", "/dev/null", "--config", mapgate.configPath, "--data-dir", mapgate.dataDirectory],
            environment: mapgate.baseEnvironment.merging(environment) { $1 }, stdin: "")
    }

    @Test func aCountedUseIsANoticeInTheJournalAndOnTheDesktop() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/lib/x86_64-linux-gnu/libnotify.so.4"] where !FileManager.default.fileExists(atPath: tool) {
            throw MissingFixture(path: "\(tool) (Debian packages dbus-daemon, libnotify4: scripts/install-deps)")
        }
        let workspace = try CLIWorkspace.prompting(user: nil)
        let work = try TemporaryDirectory()
        let bus = try BackgroundProcess("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        defer { bus.stop() }
        let address = try #require(bus.firstLine(), "dbus-daemon: \(bus.stderr)")
        let received = work.file("notifications")
        try work.write("server.py", Self.fakeServer)
        let server = try BackgroundProcess("/usr/bin/python3", [work.file("server.py"), received], environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        defer { server.stop() }
        #expect(server.firstLine() == "ready", "the notification server: \(server.stderr)")

        let counted = try runAsService(workspace, environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(counted.status == 0, "\(counted.stderr)")
        let promptLines = counted.stderr.split(separator: "\n").filter { $0.contains("uses left") || $0.contains("1.5.0") }
        #expect(!promptLines.isEmpty && promptLines.allSatisfy { $0.hasPrefix("<5>") }, "not notices in the journal: \(counted.stderr)")
        #expect(try waitUntil { (try? String(contentsOfFile: received, encoding: .utf8))?.contains("uses left") == true },
                "no notification: \((try? String(contentsOfFile: received, encoding: .utf8)) ?? "none") \(server.stderr)")
        let notification = (try? String(contentsOfFile: received, encoding: .utf8)) ?? ""
        #expect(notification.hasPrefix("mapgate\t") && notification.contains("1.5.0"), "\(notification)")

        // No desktop: the journal only, and the run is the same. A bus without a notification
        // server, or no libnotify, changes nothing either.
        server.stop()
        let withoutServer = try runAsService(workspace, environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(withoutServer.status == 0, "\(withoutServer.stderr)")
        let noDesktop = try runAsService(workspace, environment: [:])
        #expect(noDesktop.status == 0 && noDesktop.stderr.contains("<5>"), "\(noDesktop.stderr)")
        #expect(try workspace.promptsShown() == 4, "three uses counted, as three runs")
    }

    /// A terminal's stderr is not the journal: no priorities in what a person reads.
    @Test func aTerminalGetsNoPriorities() throws {
        let workspace = try CLIWorkspace.prompting(user: nil)
        let result = try workspace.mapgate.run(["tile", "plain", "0", "0", "0", "-o", "/dev/null"], at: CLIWorkspace.duringPrompts, environment: ["JOURNAL_STREAM": "1:2"])
        #expect(result.status == 0 && !result.stderr.contains("<5>"), "\(result.stderr)")
    }
}
