/// How a streamed body finishes once its last byte has been written.
enum StreamEnding {
    /// End the HTTP response normally.
    case endResponse
    /// Close the connection without ending the response.
    case closeConnection
    /// Leave the response unfinished and the connection open.
    case stall
}
