//! The frame guard on arbitrary bytes: it never panics, and everything it passes
//! on to the LSP server is a well-formed JSON-RPC frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use verbatim::transport::framing::{FrameLimits, check_body, guard};

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (mut client, server_side) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_side);
        let (mut to_server, _from_server, _closed) = guard(read, write, FrameLimits { max_message_bytes: 4096 });
        client.write_all(data).await.expect("write");
        client.shutdown().await.expect("shutdown");
        let mut passed = Vec::new();
        to_server.read_to_end(&mut passed).await.expect("read");
        // Every frame that reached the server side is a checked JSON-RPC message.
        let mut rest = passed.as_slice();
        while !rest.is_empty() {
            let header_end = rest.windows(4).position(|w| w == b"\r\n\r\n").expect("a header");
            let header = std::str::from_utf8(&rest[..header_end]).expect("ascii header");
            let length: usize = header.trim_start_matches("Content-Length: ").parse().expect("a length");
            let body = &rest[header_end + 4..header_end + 4 + length];
            assert!(check_body(body).is_ok());
            rest = &rest[header_end + 4 + length..];
        }
    });
});
