import CCurl
import FoundationEssentials

/// libcurl, opened and initialised once (`curl_global_init`), the first time a handle is made.
/// A Swift global is initialised once even when threads race to it (`swift_once`).
private let curlGlobalInitialization: Result<CURLcode, SharedLibraryError> = Result { () throws(SharedLibraryError) in
    try SharedLibrary.curl.load()
    return ccurl_global_init(Int(CURL_GLOBAL_ALL))
}

/// Owns one libcurl easy handle: made in `init`, cleaned up in `deinit`.
///
/// Not `Sendable`: a handle belongs to the thread running its transfer.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    init(url: String) throws {
        guard try curlGlobalInitialization.get() == CURLE_OK, let handle = ccurl_easy_init() else {
            throw HTTPError.transport(code: -1, message: L.localized("libcurl could not be initialised"), url: url)
        }
        self.handle = handle
        try check(ccurl_setopt_cloexec_sockets(handle), CURLOPT_OPENSOCKETFUNCTION)
    }

    deinit {
        ccurl_easy_cleanup(handle)
        if let headerList { ccurl_slist_free_all(headerList) }
    }

    // Every option is checked: one that libcurl refuses (a protocol list, TLS verification, a
    // timeout) stops the request instead of letting it run without it.

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(ccurl_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, _ value: String) throws {
        // libcurl copies string options, so the temporary C string may go away afterwards.
        try check(value.withCString { ccurl_setopt_string(handle, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws {
        try check(ccurl_setopt_pointer(handle, option, pointer), option)
    }

    func set(_ option: CURLoption, writeCallback: curl_write_callback) throws {
        try check(ccurl_setopt_write_callback(handle, option, writeCallback), option)
    }

    func set(_ option: CURLoption, progressCallback: curl_xferinfo_callback) throws {
        try check(ccurl_setopt_xferinfo_callback(handle, option, progressCallback), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws {
        guard code == CURLE_OK else {
            throw HTTPError.transport(
                code: Int(code.rawValue), message: L.localized("libcurl refused option %1$s: %2$s", "\(option.rawValue)", "\(Self.describe(code))"), url: "(not started)")
        }
    }

    func setHeaders(_ headers: [(name: String, value: String)]) throws {
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers {
            list = ccurl_slist_append(list, "\(header.name): \(header.value)")
        }
        if let headerList { ccurl_slist_free_all(headerList) }
        headerList = list
        try set(CURLOPT_HTTPHEADER, pointer: list.map { UnsafeMutableRawPointer($0) })
    }

    var responseCode: Int {
        var code = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    var effectiveURL: String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard ccurl_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &pointer) == CURLE_OK,
            let pointer
        else { return nil }
        return String(cString: pointer)
    }

    static func describe(_ code: CURLcode) -> String {
        String(cString: ccurl_easy_strerror(code))
    }
}
