import FoundationEssentials
import MapGateBase

#if canImport(Glibc)
import Glibc
#endif

/// The user's side of ``RemoteMirrorFolder`` (issue 36): in the user's own process, with the
/// user's rights, writes the folder the user named as the service's `mirror` asks, and nothing
/// but what a mirror holds (its three files by name, packages by SHA-256).
public struct MirrorFolderHost {
    let folder: LocalMirrorFolder
    let socket: LocalSocket

    public init(folder: LocalMirrorFolder, socket: LocalSocket) {
        self.folder = folder
        self.socket = socket
    }

    /// Answers requests until the service's end closes (the command ended).
    public func run() {
        while let (request, descriptor) = try? socket.receive(MirrorFolderRequest.self) {
            let answer = perform(request, descriptor: descriptor)
            descriptor.map { _ = close($0) }
            guard (try? socket.send(answer)) != nil else { break }
        }
        folder.finish()
    }

    private static let topLevel: Set<String> = [MirrorLayout.catalogName, MirrorLayout.signatureName, MirrorLayout.manifestName]

    func perform(_ request: MirrorFolderRequest, descriptor: Int32?) -> MirrorFolderAnswer {
        switch request {
        case .prepare:
            do {
                try folder.prepare()
                return .done
            } catch {
                return .failed(reason: errorMessage(error), io: true)
            }
        case .holds(let sha256, let size):
            guard sha256.isSHA256Hex else { return .failed(reason: L.localized("not a package name: %1$s", sha256), io: false) }
            return .holds(folder.holds(sha256: sha256, size: size))
        case .commit(let sha256):
            guard sha256.isSHA256Hex, let descriptor else { return .failed(reason: L.localized("not a package name: %1$s", sha256), io: false) }
            return folder.commit(copying: descriptor, sha256: sha256).map { .failed(reason: $0, io: true) } ?? .done
        case .write(let name):
            guard Self.topLevel.contains(name), let descriptor else { return .failed(reason: L.localized("not a file of a mirror: %1$s", name), io: false) }
            do {
                try folder.write(try Self.readAll(descriptor, limit: 256 << 20), name: name)
                return .done
            } catch {
                return .failed(reason: errorMessage(error), io: true)
            }
        case .remove(let name):
            guard Self.topLevel.contains(name) else { return .failed(reason: L.localized("not a file of a mirror: %1$s", name), io: false) }
            folder.remove(name: name)
            return .done
        case .removePackages(let keeping):
            folder.removePackages(keeping: Set(keeping.filter(\.isSHA256Hex)))
            return .done
        case .finish:
            folder.finish()
            return .done
        }
    }

    /// The bytes of the regular file open at `descriptor`, at most `limit`.
    private static func readAll(_ descriptor: Int32, limit: Int) throws -> Data {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= limit else {
            throw GeneralFailure(L.localized("not a file of at most %1$s bytes", "\(limit)"), kind: .io)
        }
        var data = Data(count: Int(info.st_size))
        var done = 0
        while done < data.count {
            let count = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw GeneralFailure(L.localized("cannot read it: %1$s", SystemErrorReason.text(errno)), kind: .io) }
            done += count
        }
        return data
    }
}
