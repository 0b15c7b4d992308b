extension TransportResponseHead {
    /// Whether a `Cache-Control` field says `no-store`: the response is turned down before its
    /// fields become a dictionary or its body is copied for the cache.
    var forbidsStoring: Bool {
        headerFields.contains {
            $0.name.lupineEqualsIgnoringASCIICase("Cache-Control") && CacheControl.lists("no-store", in: $0.value)
        }
    }
}
