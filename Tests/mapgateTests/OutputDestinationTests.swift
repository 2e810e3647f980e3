import Foundation
import MapGate
@testable import mapgate
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `-o FILE`: written into what the user named, never over a device, FIFO or directory.
@Suite struct OutputDestinationTests {
    let work: TemporaryDirectory
    let tile = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])

    init() throws {
        work = try TemporaryDirectory()
    }

    /// glibc's `makedev` is a macro; for majors below 4096 and minors below 256 it is this.
    func device(_ major: UInt64, _ minor: UInt64) -> dev_t { dev_t((major << 8) | minor) }

    func fileType(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    /// A character device node like /dev/null (1:3), made in the temporary folder: never the real one.
    @Test(.tags(.root), .enabled(if: geteuid() == 0, "mknod needs root (CI runs as root)"))
    func characterDeviceIsWrittenThroughNotReplaced() throws {
        let node = work.file("null")
        #expect(mknod(node, S_IFCHR | 0o666, device(1, 3)) == 0)
        let destination = try OutputDestination.resolve(node)
        #expect(destination.kind == .writeThrough(path: node, append: false))
        try destination.write(tile)
        #expect(fileType(node) == S_IFCHR)
    }

    @Test(.tags(.root), .enabled(if: geteuid() == 0, "mknod needs root (CI runs as root)"))
    func blockDeviceIsRefused() throws {
        // Major 240 is reserved for local use: no driver answers it, so even a bug writes nowhere.
        let node = work.file("disk")
        #expect(mknod(node, S_IFBLK | 0o600, device(240, 0)) == 0)
        #expect(throws: OutputError.self) { try OutputDestination.resolve(node) }
        #expect(fileType(node) == S_IFBLK)
    }

    /// Found by an attack: `status`, `list`, `--version` and `--json` lines written to a full
    /// device (a full disk) exited 0 with nothing written. Now 74 with the reason; a closed pipe
    /// (`| head -c 1`) is still no failure. The full device (1:7, like /dev/full) is made here.
    @Test(.tags(.root), .enabled(if: geteuid() == 0, "mknod needs root (CI runs as root)"))
    func aFullStandardOutputIsAFailure() throws {
        let full = work.file("full")
        #expect(mknod(full, S_IFCHR | 0o666, device(1, 7)) == 0)
        try FileManager.default.createDirectory(atPath: work.file("m"), withIntermediateDirectories: true)
        let mapgate = try MapGateBinary(workDirectory: work.file("m"))
        let environment = mapgate.baseEnvironment.merging(["LANG": "C.UTF-8", "LANGUAGE": "", "LC_ALL": ""]) { $1 }
        for arguments in [["--version"], ["--json", "status"], ["list"]] {
            let result = try runProcess(
                "/bin/bash", ["-c", #""$0" "$@" --data-dir "$DATA" > "$FULL""#, mapgate.path] + arguments,
                environment: environment.merging(["DATA": mapgate.dataDirectory, "FULL": full]) { $1 })
            #expect(result.status == 74, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("cannot write to standard output: the disk is full"), "\(result.stderr)")
        }
        // In Japanese, standard output is a word, not a path: no spaces set it off (found by a
        // review: "標準出力 に書き込めません").
        let japanese = try runProcess(
            "/bin/bash", ["-c", #""$0" list --data-dir "$DATA" > "$FULL""#, mapgate.path],
            environment: environment.merging(["DATA": mapgate.dataDirectory, "FULL": full, "LANG": "ja_JP.UTF-8"]) { $1 })
        #expect(japanese.status == 74 && japanese.stderr.contains("標準出力に書き込めません："), "\(japanese.stderr)")
        let piped = try runProcess("/bin/bash", ["-c", #""$0" --help | head -c 1 >/dev/null; exit "${PIPESTATUS[0]}""#, mapgate.path], environment: environment)
        #expect(piped.status == 0, "\(piped.stderr)")
        // A standard output another process made non-blocking (found by a review: a full pipe
        // then failed with EAGAIN) is waited on, as a blocking one is: all of it arrives.
        let nonBlocking = """
            import fcntl, os, subprocess, sys, threading, time
            r, w = os.pipe()
            fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page, smaller than the manual
            fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
            got = []
            def read():
                time.sleep(1)
                while True:
                    piece = os.read(r, 65536)
                    if not piece: break
                    got.append(piece)
            reader = threading.Thread(target=read)
            reader.start()
            run = subprocess.run(sys.argv[1:], stdout=w)
            os.close(w)
            reader.join()
            print(run.returncode, sum(len(p) for p in got))
            """
        let expected = try runProcess(mapgate.path, ["help", "man"], environment: environment).stdout.utf8.count
        let slow = try runProcess("/usr/bin/python3", ["-c", nonBlocking, mapgate.path, "help", "man"], environment: environment)
        #expect(slow.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0 \(expected)", "\(slow.stdout) \(slow.stderr)")
    }

    @Test func fifoIsWrittenThrough() throws {
        let fifo = work.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        let destination = try OutputDestination.resolve(fifo)
        nonisolated(unsafe) var received = Data()
        let reader = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            received = FileHandle(forReadingAtPath: fifo)?.readDataToEndOfFile() ?? Data()
            reader.signal()
        }
        try destination.write(tile)
        #expect(reader.wait(timeout: .now() + 10) == .success)
        #expect(received == tile)
        #expect(fileType(fifo) == S_IFIFO)
    }

    @Test func directoryIsAClearError() throws {
        let error = try #require(throws: OutputError.self) { try OutputDestination.resolve(work.path) }
        #expect(error.errorDescription == "cannot write to \(work.path): it is a directory; name a file in it")
        #expect(error.kind == .usage)
    }

    @Test func missingFolderIsAClearError() throws {
        let error = try #require(throws: OutputError.self) { try OutputDestination.resolve(work.file("nope/tile.png")) }
        #expect(error.reason.contains("does not exist"))
    }

    @Test func newFileIsWrittenAtomicallyWithTheUmask() throws {
        let path = work.file("tile.png")
        let destination = try OutputDestination.resolve(path)
        #expect(destination.kind == .replace(path: path))
        try destination.write(tile)
        #expect(FileManager.default.contents(atPath: path) == tile)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["tile.png"])  // no temporary left
    }

    @Test func regularFileIsReplacedKeepingItsMode() throws {
        let path = try work.write("tile.png", "old contents that are longer than the tile")
        #expect(chmod(path, 0o640) == 0)
        try OutputDestination.resolve(path).write(tile)
        #expect(FileManager.default.contents(atPath: path) == tile)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o640)
    }

    /// A regular file written through (standard output redirected to it) gets its room taken
    /// before the first byte (the delivery), without its size changing first: a file opened to
    /// append (`>>`) gets the bytes at its end, right after what it held, and one opened to write
    /// from the start gets exactly them.
    @Test(arguments: [true, false])
    func aRegularFileWrittenThroughGetsExactlyTheBytes(appending: Bool) throws {
        let path = try work.write("out.png", "old")
        let descriptor = open(path, O_WRONLY | (appending ? O_APPEND : O_TRUNC))
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var delivered = false
        try OutputDestination.writeAll(tile, to: descriptor, name: path, room: 4096, willDeliver: {}) { step in
            delivered = true
            try step()
        }
        #expect(delivered)
        #expect(FileManager.default.contents(atPath: path) == (appending ? Data("old".utf8) : Data()) + tile)
    }

    /// A file system that cannot allocate ahead (ext3: EOPNOTSUPP, stood in here on a tmpfs):
    /// its free space is looked at instead, so a disk without room for the bytes fails before
    /// the delivery (found by an attack: a cut tile and a use counted on ext3), and one with room
    /// goes on.
    @Test(.tags(.root), .enabled(if: TinyDisk.canMount, "mounting a tmpfs needs root (CI runs as root)"))
    func withoutAllocationAheadTheFreeSpaceIsLookedAt() throws {
        let disk = try TinyDisk(at: work.file("disk"))
        defer { disk.unmount() }
        let path = disk.path + "/out.png"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let unsupported: (Int32, off_t, off_t) -> Int32 = { _, _, _ in
            errno = EOPNOTSUPP
            return -1
        }
        try OutputDestination.reserveRoom(64 << 10, in: descriptor, name: path, allocate: unsupported)
        #expect(throws: OutputError.self) { try OutputDestination.reserveRoom(4 << 20, in: descriptor, name: path, allocate: unsupported) }
        try disk.make("full")
        let error = #expect(throws: OutputError.self) { try OutputDestination.reserveRoom(8192, in: descriptor, name: path, allocate: unsupported) }
        #expect(error?.reason == SystemErrorReason.text(ENOSPC))
    }

    @Test func symlinkIsFollowedNotReplaced() throws {
        let target = try work.write("real.png", "old")
        let link = work.file("link.png")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try OutputDestination.resolve(link).write(tile)
        #expect(fileType(link) == S_IFLNK)
        #expect(FileManager.default.contents(atPath: target) == tile)
    }

    @Test func danglingSymlinkCreatesItsTarget() throws {
        let link = work.file("link.png")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: work.file("made.png"))
        try OutputDestination.resolve(link).write(tile)
        #expect(fileType(link) == S_IFLNK)
        #expect(FileManager.default.contents(atPath: work.file("made.png")) == tile)
    }

    @Test func binaryToATerminalIsRefusedUnlessAskedFor() throws {
        let error = try #require(throws: OutputError.self) { try OutputDestination.resolve(nil, stdoutIsTerminal: true) }
        #expect(error.reason.contains("use -o FILE or redirect"))
        #expect(try OutputDestination.resolve("-", stdoutIsTerminal: true).kind == .standardOutput(explicit: true))
        #expect(try OutputDestination.resolve(nil, stdoutIsTerminal: false).kind == .standardOutput(explicit: false))
    }
}
