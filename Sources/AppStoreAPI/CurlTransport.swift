internal import CCurl
import IAPFoundation

/// One HTTP exchange.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// The longest this exchange may take (ms), when less than the transport's own timeouts: what is
    /// left of the command's deadline.
    public var timeoutMs: Int64?

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// What came back.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends requests; the client's only door to the network.
public protocol HTTPTransport: AnyObject {
    func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse
}

/// HTTPS over libcurl: TLS verification always on, HTTPS only, no redirects, connect and total timeouts,
/// a bounded response size (``maxBody``: libcurl refuses a larger announced length, and the write
/// callback stops an answer that grows past it, announced or not).
public final class CurlTransport: HTTPTransport {
    /// Seconds to wait for the TCP+TLS connection.
    public var connectTimeout: Int
    /// Seconds a whole exchange may take.
    public var totalTimeout: Int
    /// A CA bundle to trust instead of the system's (tests only: their own server's certificate).
    public var caFile: String?
    /// The largest answer accepted (4 MiB; the headers are bounded alike): Apple's pages hold at most 20
    /// signed items, tens of kilobytes.
    public static let maxBody = 4 << 20

    /// Loads libcurl (and runs curl_global_init) on the first request of the process (see CCurl):
    /// a missing library is refused by name with the Debian package to install (exit 69), never
    /// retried.
    static func requireLibrary() throws(AppStoreAPIError) {
        guard let message = iapctl_curl_unavailable() else { return }
        var error = AppStoreAPIError(.unavailable, String(cString: message))
        error.isRetryable = false
        throw error
    }

    public init(connectTimeout: Int = 10, totalTimeout: Int = 60, caFile: String? = nil) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.caFile = caFile
    }

    /// CURLOPT_WRITEFUNCTION's and CURLOPT_HEADERFUNCTION's callback.
    typealias WriteCallback = @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

    /// Collects bytes a callback hands over.
    private final class Sink {
        var bytes: [UInt8] = []
        var overflow = false
    }

    public func send(_ request: HTTPRequest) throws(AppStoreAPIError) -> HTTPResponse {
        try Self.requireLibrary()
        guard let handle = curl_easy_init() else {
            throw AppStoreAPIError(.internal, "libcurl could not start")
        }
        defer { curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for (name, value) in request.headers {
            guard let grown = curl_slist_append(list, "\(name): \(value)") else {
                throw AppStoreAPIError(.internal, "libcurl: out of memory")
            }
            list = grown
        }
        let body = Sink()
        let headers = Sink()
        let bodyContext = Unmanaged.passUnretained(body).toOpaque()
        let headerContext = Unmanaged.passUnretained(headers).toOpaque()
        let collect: WriteCallback = { data, size, count, context in
            guard let data, let context else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
            let length = size * count
            if sink.bytes.count + length > CurlTransport.maxBody {
                sink.overflow = true
                return 0
            }
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
            return length
        }
        var setup: [CURLcode] = [
            iapctl_curl_set_string(handle, CURLOPT_URL, request.url),
            iapctl_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "https"),
            iapctl_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            iapctl_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            iapctl_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            iapctl_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            iapctl_curl_set_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(Self.maxBody)),
            iapctl_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.capped(connectTimeout, request.timeoutMs)),
            iapctl_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Self.capped(totalTimeout, request.timeoutMs)),
            iapctl_curl_set_string(handle, CURLOPT_USERAGENT, "iapctl"),
            iapctl_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method),
            iapctl_curl_set_slist(handle, CURLOPT_HTTPHEADER, list),
            iapctl_curl_set_write_function(handle, CURLOPT_WRITEFUNCTION, collect),
            iapctl_curl_set_pointer(handle, CURLOPT_WRITEDATA, bodyContext),
            iapctl_curl_set_write_function(handle, CURLOPT_HEADERFUNCTION, collect),
            iapctl_curl_set_pointer(handle, CURLOPT_HEADERDATA, headerContext),
        ]
        if let caFile { setup.append(iapctl_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        if let payload = request.body {
            setup.append(iapctl_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, payload.count))
            if payload.isEmpty {
                setup.append(iapctl_curl_set_string(handle, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                setup.append(
                    payload.withUnsafeBytes {
                        iapctl_curl_set_string(
                            handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress!.assumingMemoryBound(to: CChar.self))
                    })
            }
        }
        if let failed = setup.first(where: { $0 != CURLE_OK }) {
            throw AppStoreAPIError(.internal, "libcurl refused an option: \(Self.describe(failed))")
        }
        let result = curl_easy_perform(handle)
        if body.overflow || headers.overflow || result == CURLE_FILESIZE_EXCEEDED {
            throw Self.tooLarge(request)
        }
        guard result == CURLE_OK else { throw Self.transportError(result, url: request.url) }
        var status = 0
        guard iapctl_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK else {
            throw AppStoreAPIError(.internal, "libcurl has no response code")
        }
        return HTTPResponse(status: status, headers: Self.parseHeaders(headers.bytes), body: body.bytes)
    }

    /// The error of an answer larger than ``maxBody``.
    static func tooLarge(_ request: HTTPRequest) -> AppStoreAPIError {
        let path = request.url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.url
        return AppStoreAPIError(
            .malformedResponse,
            "\(request.method) \(path): the answer is larger than \(maxBody >> 20) MiB (iapctl's cap on one answer); stopped",
            hint: "Apple's answers are far smaller: check that the base URL is Apple's")
    }

    /// `seconds` in ms, at most `limitMs` and at least 1 (0 is "no timeout" to libcurl).
    static func capped(_ seconds: Int, _ limitMs: Int64?) -> Int {
        let ms = Int64(seconds) * 1000
        return Int(max(1, min(ms, limitMs ?? ms)))
    }

    static func describe(_ code: CURLcode) -> String {
        String(cString: curl_easy_strerror(code))
    }

    static func host(_ url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return url }
        return String(parts[2])
    }

    private static func transportError(_ code: CURLcode, url: String) -> AppStoreAPIError {
        let host = host(url)
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR:
            var error = AppStoreAPIError(
                .unavailable, "TLS with \(host) failed: \(describe(code))",
                hint: "the server's certificate is not trusted; iapctl never turns verification off")
            error.isRetryable = code != CURLE_PEER_FAILED_VERIFICATION
            return error
        case CURLE_OPERATION_TIMEDOUT:
            return AppStoreAPIError(.unavailable, "\(host) did not answer in time (\(describe(code)))")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT:
            return AppStoreAPIError(
                .unavailable, "cannot reach \(host): \(describe(code))", hint: "check the network, DNS and proxy")
        default:
            return AppStoreAPIError(.unavailable, "the request to \(host) failed: \(describe(code))")
        }
    }

    /// Every header block curl saw (a 100-continue adds one); the last one wins.
    static func parseHeaders(_ bytes: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\r\n" || $0 == "\n" }) {
            if line.hasPrefix("HTTP/") {
                result = [:]
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            result[name] = String(value.trimmed(.spacesAndNewlines, leading: false))
        }
        return result
    }
}
