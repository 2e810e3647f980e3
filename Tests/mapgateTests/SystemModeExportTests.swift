import Foundation
import MapGate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `export` in system mode (issue 39): the service makes the archive and sends it (`export REGION
/// -`), counting the use when it sends it; the user's own process writes the FILE they named, so
/// the file is theirs and the service opens no file a user names. Needs root, as the other
/// system-mode tests.
@Suite(.enabled(if: geteuid() == 0, "needs root to run the service and users as uids of their own"))
struct SystemModeExportTests {
    let machine: SystemMachine
    let user = SystemMachine.user
    let during = "2027-02-05 00:00:00"

    init() throws {
        machine = try SystemMachine()
        try machine.publish(version: "1.4.0")
        try machine.offer("plain", fixture: "node-mbtiles-plain_1.mbtiles", format: "png")
    }

    /// `plain` installed through the service, and the gate counting uses (a newer app out 30 days).
    func startPrompting() throws {
        try machine.startService(at: "2027-01-01 00:00:00")
        #expect(try machine.run(["sync", "plain"], as: 0).status == 0)
        try machine.publish(version: "1.5.0")
        #expect(try machine.run(["check"], as: 0).status == 0)
        try machine.startService(at: during)
    }

    /// Found by an attack: Ctrl-C while the user's process flushed what the service had sent (a
    /// slow disk: its fsync) left no file, and the use was spent. The file goes into place first,
    /// and the run ends with the command's code (found by the next attack: 130, over the file in
    /// place and counted; a script that tries again on failure would spend another use).
    @Test func ctrlCWhileTheSentTileIsFlushedStillPutsItInPlace() throws {
        try startPrompting()
        let marker = machine.work.file("home-\(user)/fsync-began")
        let library = try PreloadLibrary.compileSlowFsync(in: machine.work.path, seconds: 3, marker: marker)
        let before = try machine.promptsShown()
        let target = machine.work.file("home-\(user)/t.png")
        let tile = try machine.start(["tile", "plain", "0", "0", "0", "-o", target], as: user, environment: ["LD_PRELOAD": library])
        // The command has answered, and the user's process flushes the file for 3 s.
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: marker) }, "\(tile.stderr)")
        #expect(try machine.promptsShown() == before + 1, "the service sent the tile")
        #expect(tile.wait(timeout: 0) == nil, "still flushing")
        tile.signal(SIGINT)
        let code = tile.wait(timeout: 20)
        #expect(code == 0, "\(String(describing: code)): \(tile.stderr)")
        #expect(FileManager.default.contents(atPath: target)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true, "the tile is in place: \(tile.stderr)")
        #expect(try machine.promptsShown() == before + 1)
    }

    /// A device the user named, written through: a failure names it, not "standard output" (the
    /// service writes to what the user's process opened and passed as its standard output; found
    /// by an attack). The device is `/dev/full`'s kind, made in the test's folder; nothing counted.
    @Test func aFailureOnANamedDeviceNamesIt() throws {
        try startPrompting()
        let full = machine.work.file("home-\(user)/full")
        #expect(mknod(full, S_IFCHR | 0o666, dev_t((1 << 8) | 7)) == 0)  // 1:7, the full device
        chmod(full, 0o666)
        let before = try machine.promptsShown()
        for arguments in [["tile", "plain", "0", "0", "0", "-o", full], ["export", "plain", full]] {
            let result = try machine.run(arguments, as: user)
            #expect(result.status == 74, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("cannot write to \(full):") && !result.stderr.contains("standard output"), "\(arguments): \(result.stderr)")
        }
        #expect(try machine.promptsShown() == before)
    }

    @Test func aUsersExportIsWrittenByTheirOwnProcessAndCountedOnce() throws {
        try startPrompting()
        let before = try machine.promptsShown()
        let target = machine.work.file("home-\(user)/plain.pmtiles")
        let export = try machine.run(["export", "plain", target], as: user)
        #expect(export.status == 0, "\(export.stderr)")
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_uid == user, "the archive belongs to the user who asked")
        let archive = try PMTilesArchive(path: target)
        var count = 0
        try archive.forEachTile { _, _, _, _ in count += 1 }
        let installed = try MBTilesFile(path: machine.serviceData + "/regions/plain.mbtiles")
        #expect(count == (try installed.tileCount()) && count > 0)
        #expect(try archive.contentHash() == installed.contentHash())
        #expect(try machine.promptsShown() == before + 1, "one use, counted when the service sent the archive")
        // A destination that cannot be written costs nothing: it is looked at before the request.
        let folder = try machine.run(["export", "plain", machine.work.file("home-\(user)")], as: user)
        #expect(folder.status == 64, "\(folder.stderr)")
        #expect(try machine.promptsShown() == before + 1)
        // A dangling symbolic link: its file is made by the user's process, as `tile -o` makes it
        // (it was opened without creating it).
        let made = machine.work.file("home-\(user)/made.pmtiles")
        let link = machine.work.file("home-\(user)/link.pmtiles")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: made)
        #expect(lchown(link, user, user) == 0)
        let throughLink = try machine.run(["export", "plain", link], as: user)
        #expect(throughLink.status == 0, "\(throughLink.stderr)")
        #expect(stat(made, &info) == 0 && info.st_uid == user)
        #expect(try PMTilesArchive(path: made).contentHash() == installed.contentHash())
    }

    /// What an export says it wrote is said as in per-user mode, by the user's process once the
    /// file is in place: its name, not "-", and `--json`'s line on standard output (found by an
    /// attack: the command, which writes to "-", said `"file":"-"` on standard error, and nothing
    /// without `--json`).
    @Test func anExportSaysWhatItWroteUnderTheNameGiven() throws {
        try startPrompting()
        let installed = try MBTilesFile(path: machine.serviceData + "/regions/plain.mbtiles")
        let tiles = try installed.tileCount()
        let target = machine.work.file("home-\(user)/plain.pmtiles")
        let export = try machine.run(["export", "plain", target], as: user)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("exported plain to \(target): \(tiles) tiles"), "\(export.stdout)")
        let second = machine.work.file("home-\(user)/second.pmtiles")
        let json = try machine.run(["--json", "export", "plain", second], as: user)
        #expect(json.status == 0, "\(json.stderr)")
        let line = try MapGateBinary.json(json.stdout)
        #expect(line["file"] as? String == second && line["region"] as? String == "plain", "\(json.stdout)")
        #expect(line["tiles"] as? Int == tiles, "\(json.stdout)")
        #expect(line["size"] as? Int == Int(FileManager.default.sizeOfItem(atPath: second)), "\(json.stdout)")
        #expect(!json.stderr.contains("\"file\""), "\(json.stderr)")
        // A FILE named `.mbtiles` is refused by the user's own process, as per user.
        let misnamed = machine.work.file("home-\(user)/plain.mbtiles")
        let refused = try machine.run(["export", "plain", misnamed], as: user)
        #expect(refused.status == 64 && refused.stderr.contains("not an MBTiles file: name it .pmtiles"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: misnamed))
    }

    /// Another user's writable file in a sticky folder (`/tmp`): the user may write it but not
    /// replace it (found by an attack: the use was counted at the tile's first byte, and the
    /// user's process then failed to put the file in place, 74). Refused before the gate.
    @Test func anotherUsersFileInAStickyFolderIsRefusedBeforeTheGate() throws {
        try startPrompting()
        let sticky = machine.work.file("sticky")
        try FileManager.default.createDirectory(atPath: sticky, withIntermediateDirectories: true)
        #expect(chmod(sticky, 0o1777) == 0)
        let shown = try machine.promptsShown()
        for (name, command) in [("other.png", ["tile", "plain", "0", "0", "0", "-o"]), ("other.pmtiles", ["export", "plain"])] {
            let file = sticky + "/" + name
            try "someone else's\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(chown(file, 65534, 65534) == 0 && chmod(file, 0o666) == 0)
            let result = try machine.run(command + [file], as: user)
            #expect(result.status == 74, "\(result.stderr)")
            #expect(result.stderr.contains("another user's file in \(sticky), where only a file's owner may replace it"), "\(result.stderr)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "someone else's\n")
        }
        #expect(try machine.promptsShown() == shown)
    }

    /// Standard output closed (`>&-`): the tile or archive for it is refused before the gate, as
    /// per user (found by an attack: the service wrote it into the /dev/null the user's process
    /// put there, counted the use, and the run said 0).
    @Test func aClosedStandardOutputIsRefusedBeforeTheGate() throws {
        try startPrompting()
        let shown = try machine.promptsShown()
        // `/dev/stdout` is that output under another name (found by the next attack).
        for command in [["tile", "plain", "0", "0", "0"], ["export", "plain", "-"], ["tile", "plain", "0", "0", "0", "-o", "/dev/stdout"]] {
            let result = try machine.run(command, as: user, prefix: ["/bin/sh", "-c", "exec \"$@\" >&-", "sh"])
            #expect(result.status == 74, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("it was closed when mapgate started"), "\(result.stderr)")
        }
        #expect(try machine.promptsShown() == shown)
    }

    /// A client of its own that names a file for the service to write is refused, with the reason.
    @Test func aHandMadeRequestCannotNameTheFile() throws {
        try machine.startService()
        let null = open("/dev/null", O_RDWR)
        defer { close(null) }
        let target = machine.work.file("written-by-the-service.pmtiles")
        let client = try SystemClient.connect(to: machine.socketPath, policy: machine.policyPath)
        try client.send(SystemRequest(arguments: ["export", "plain", target], environment: [:]), streams: [null, null, null])
        let reply = try client.reply()
        #expect(reply.refusal == SystemRefusal(.destination, target))
        #expect(reply.refusal?.errorDescription?.contains("writes no file a user names") == true)
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
