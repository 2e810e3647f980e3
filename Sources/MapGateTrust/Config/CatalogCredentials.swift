import FoundationEssentials
import Glibc
import MapGateBase

/// What the system service sends with every catalog and package request (issue 36), from the file
/// the policy's `credentialsFile` names (`/etc/mapgate/credentials`): a publisher who serves its
/// packages only to credentialed machines gets maps no user of the machine can fetch themselves.
///
/// The file is JSON, `{"authorization": "Bearer …"}`: the value of an `Authorization` header,
/// which libcurl never sends on to another host a redirect leads to. It must be readable by the
/// service's user only (no permission for others): credentials a user can read are a user's.
public struct CatalogCredentials: Sendable, Equatable {
    public var authorization: String

    /// The credentials at `path`, nil when there is no file. A file others may read, or that is
    /// not what it should be, is an error naming it (exit 64), never ignored.
    public static func load(path: String) throws -> CatalogCredentials? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw ConfigurationError(file: .credentials, path: path, key: nil, reason: SystemErrorReason.text(errno))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigurationError(file: .credentials, path: path, key: nil, reason: L.localized("is not a regular file"))
        }
        guard info.st_mode & 0o007 == 0 else {
            throw ConfigurationError(
                file: .credentials, path: path, key: nil,
                reason: L.localized("other users may read it (mode %1$s): make it readable by the service's user only (chmod 0600)", String(info.st_mode & 0o777, radix: 8)))
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(file: .credentials, path: path, key: nil, reason: errorMessage(error))
        }
        var reader = try JSONFields(data: data, path: path, file: .credentials)
        let authorization = try reader.string("authorization", valid: { !$0.isEmpty && !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        try reader.rejectUnknownKeys(known: ["authorization"])
        guard let authorization else {
            throw ConfigurationError(file: .credentials, path: path, key: "authorization", reason: L.localized("is missing"))
        }
        return CatalogCredentials(authorization: authorization)
    }
}
