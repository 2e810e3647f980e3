import CCrypto
import CCurl
import CFreeType
import CH2O
import CMicroHTTPD
import FoundationEssentials

/// The C libraries opened with `dlopen` when a command first needs them, instead of being linked:
/// together they cost every start, `--version` included, about 10 ms of dynamic loading.
/// The shims in `Sources/CCurl`, `CMicroHTTPD`, `CH2O`, `CFreeType` and `CCrypto` open them; this names them for
/// the user. The same list (soname, Debian package) is in `packaging/dlopen-libraries`, from
/// which `scripts/package` writes `Depends:` (a test checks that the two agree).
/// docs/decisions/dlopen-libraries.md.
public enum SharedLibrary: String, CaseIterable, Sendable {
    case curl, microhttpd, h2o, freetype, crypto

    /// The file `dlopen` opens.
    public var soname: String {
        switch self {
        case .curl: "libcurl.so.4"
        case .microhttpd: "libmicrohttpd.so.12"
        case .h2o: "libh2o-evloop.so.0.13"
        case .freetype: "libfreetype.so.6"
        case .crypto: "libcrypto.so.3"
        }
    }

    /// The Debian package that holds it.
    public var debianPackage: String {
        switch self {
        case .curl: "libcurl4"
        case .microhttpd: "libmicrohttpd12"
        case .h2o: "libh2o-evloop0.13"
        case .freetype: "libfreetype6"
        case .crypto: "libssl3"
        }
    }

    /// What needs it, for the error.
    var purpose: String {
        switch self {
        case .curl: L.localized("downloads (libcurl)")
        case .microhttpd: L.localized("the HTTP server (libmicrohttpd)")
        case .h2o: L.localized("the HTTP server (h2o)")
        case .freetype: L.localized("rendering glyphs (FreeType)")
        case .crypto: L.localized("hashes and signatures (libcrypto)")
        }
    }

    /// Opens the library (once; later calls answer at once) or throws why it cannot be.
    public func load() throws(SharedLibraryError) {
        let error: UnsafePointer<CChar>? =
            switch self {
            case .curl: ccurl_load_error()
            case .microhttpd: cmhd_load_error()
            case .h2o: ch2o_load_error()
            case .freetype: cft_load_error()
            case .crypto: ccrypto_load_error()
            }
        if let error { throw SharedLibraryError(library: self, reason: String(cString: error)) }
    }
}

/// A library mapgate opens when needed could not be opened: it is not installed, or is not the
/// version mapgate was built against. Exit 69, as an unavailable service.
public struct SharedLibraryError: MapGateFailure, LocalizedError, Sendable, Equatable {
    public let library: SharedLibrary
    /// `dlerror`'s text.
    public let reason: String
    public var kind: FailureKind { .unavailable }
    public var errorDescription: String? {
        L.localized("%1$s is needed for %2$s and could not be loaded (%3$s); ", "\(library.soname)", "\(library.purpose)", "\(reason)")
            + L.localized("install the Debian package %1$s", "\(library.debianPackage)")
    }
}
