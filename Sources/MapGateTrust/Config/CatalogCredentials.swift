import FoundationEssentials
import Glibc
import MapGateBase

/// What the system service sends with every catalog and package request (issue 36), from the file
/// the policy's `credentialsFile` names (`/etc/mapgate/credentials`): a publisher who serves its
/// packages only to credentialed machines gets maps no user of the machine can fetch themselves.
///
/// The file is JSON with either or both of `"authorization": "Bearer …"` (the value of an
/// `Authorization` header, which libcurl never sends on to another host a redirect leads to) and a
/// TLS client certificate, `"certificate": "/etc/mapgate/client.pem"` with `"key":
/// "/etc/mapgate/client.key"` (PEM; without `key` the certificate's file holds it too), presented
/// to the catalog's host over HTTPS. The file, and the key's file, must be readable by the
/// service's user only (no permission for others): credentials a user can read are a user's.
public struct CatalogCredentials: Sendable, Equatable {
    public var authorization: String?
    public var certificate: String?
    public var key: String?

    /// The credentials at `path`, nil when there is no file. A file others may read, or that is
    /// not what it should be, is an error naming it (exit 64), never ignored.
    public static func load(path: String) throws -> CatalogCredentials? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw ConfigurationError(file: .credentials, path: path, key: nil, reason: SystemErrorReason.text(errno))
        }
        try checkPrivate(info, path: path, key: nil)
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(file: .credentials, path: path, key: nil, reason: errorMessage(error))
        }
        var reader = try JSONFields(data: data, path: path, file: .credentials)
        let authorization = try reader.string("authorization", valid: { !$0.isEmpty && !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        let certificate = try reader.string("certificate", must: JSONFields.absolutePath, valid: { $0.hasPrefix("/") })
        let key = try reader.string("key", must: JSONFields.absolutePath, valid: { $0.hasPrefix("/") })
        try reader.rejectUnknownKeys(known: ["authorization", "certificate", "key"])
        guard authorization != nil || certificate != nil else {
            throw ConfigurationError(file: .credentials, path: path, key: "authorization", reason: L.localized("is missing"))
        }
        if key != nil, certificate == nil {
            throw ConfigurationError(file: .credentials, path: path, key: "certificate", reason: L.localized("is missing"))
        }
        // The private key (in its own file, or in the certificate's) is the secret: the user's
        // if they can read it.
        if let secret = key ?? certificate {
            var secretInfo = stat()
            guard stat(secret, &secretInfo) == 0 else {
                throw ConfigurationError(file: .credentials, path: path, key: key == nil ? "certificate" : "key", reason: "\(secret): \(SystemErrorReason.text(errno))")
            }
            try checkPrivate(secretInfo, path: secret, key: nil)
        }
        return CatalogCredentials(authorization: authorization, certificate: certificate, key: key)
    }

    /// A regular file no other user may read, or an error naming `path`.
    private static func checkPrivate(_ info: stat, path: String, key: String?) throws {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigurationError(file: .credentials, path: path, key: key, reason: L.localized("is not a regular file"))
        }
        guard info.st_mode & 0o007 == 0 else {
            throw ConfigurationError(
                file: .credentials, path: path, key: key,
                reason: L.localized("other users may read it (mode %1$s): make it readable by the service's user only (chmod 0600)", String(info.st_mode & 0o777, radix: 8)))
        }
    }
}
