//! The editor's input (stdin), read by a thread of its own that accounts for every
//! byte, so that the server can tell whether something the editor wrote has not
//! been handled yet (`service::editor_order`: an agent's request is answered after
//! the editor's messages sent before it).
//!
//! tokio's own stdin reads on a blocking-pool thread into a buffer nobody can look
//! into: bytes taken off the pipe there are invisible until the frame guard runs,
//! which on a loaded machine can be milliseconds later. Here the thread marks itself
//! busy before it reads and counts what it took before it is idle again, and the
//! frame guard counts what it handled: bytes are unread while the pipe holds some
//! (`FIONREAD`), while the thread is busy, or while it took more than the guard
//! handled.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

use crate::transport::framing::Observer;

const CHUNK: usize = 64 * 1024;

/// What the reading thread and the frame guard have done with the editor's bytes.
#[derive(Debug, Default)]
pub struct InputAccount {
    /// The thread is between a wake-up and the count of what it read.
    busy: AtomicBool,
    taken: AtomicU64,
    handled: AtomicU64,
}

impl InputAccount {
    /// Bytes the editor wrote that the frame guard has not handled yet.
    pub fn unread(&self) -> bool {
        let in_pipe = rustix::io::ioctl_fionread(io::stdin().as_fd()).is_ok_and(|unread| unread > 0);
        in_pipe
            || self.busy.load(Ordering::SeqCst)
            || self.taken.load(Ordering::SeqCst) > self.handled.load(Ordering::SeqCst)
    }
}

/// Counts what the frame guard handled, and passes each message on to `inner`.
pub struct Counted<O> {
    pub account: Arc<InputAccount>,
    pub inner: O,
}

impl<O: Observer> Observer for Counted<O> {
    fn message(&self, method: &str) {
        self.inner.message(method);
    }

    fn handled(&self, bytes: u64) {
        self.account.handled.store(bytes, Ordering::SeqCst);
        self.inner.handled(bytes);
    }
}

/// The editor's stdin as an async reader fed by the reading thread.
pub struct EditorInput {
    chunks: mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
    offset: usize,
}

/// Starts the reading thread on this process's stdin.
pub fn stdin() -> (EditorInput, Arc<InputAccount>) {
    let account = Arc::new(InputAccount::default());
    let (sender, chunks) = mpsc::channel(16);
    let thread_account = account.clone();
    let spawned = std::thread::Builder::new()
        .name("verbatim-editor-input".into())
        .spawn(move || read_stdin(&thread_account, &sender));
    if let Err(error) = spawned {
        tracing::error!("cannot start the thread that reads the editor's input: {error}");
    }
    (EditorInput { chunks, current: Vec::new(), offset: 0 }, account)
}

fn read_stdin(account: &InputAccount, sender: &mpsc::Sender<Vec<u8>>) {
    let stdin = io::stdin();
    let mut buffer = vec![0; CHUNK];
    loop {
        // Wait for bytes without taking them, so that "busy" covers the read itself.
        // Whatever poll says (interrupted, or an input it refuses), the read below
        // tells what there is.
        let mut fds = [rustix::event::PollFd::new(&stdin, rustix::event::PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, None);
        account.busy.store(true, Ordering::SeqCst);
        let read = stdin.lock().read(&mut buffer);
        let chunk = match read {
            Ok(0) => {
                account.busy.store(false, Ordering::SeqCst);
                return;
            }
            Ok(count) => buffer[..count].to_vec(),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {
                account.busy.store(false, Ordering::SeqCst);
                continue;
            }
            Err(error) => {
                tracing::debug!("the editor's input ended: {error}");
                account.busy.store(false, Ordering::SeqCst);
                return;
            }
        };
        account.taken.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        account.busy.store(false, Ordering::SeqCst);
        if sender.blocking_send(chunk).is_err() {
            return;
        }
    }
}

impl AsyncRead for EditorInput {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.offset == self.current.len() {
            match self.chunks.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    self.current = chunk;
                    self.offset = 0;
                }
                // The thread ended: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let available = &self.current[self.offset..];
        let count = available.len().min(buf.remaining());
        buf.put_slice(&available[..count]);
        self.offset += count;
        Poll::Ready(Ok(()))
    }
}
