//! A reader that closes stdout early (`pathtrack generate cyclic 100 | head`) ends the
//! program quietly with exit code 0, as `cat` and `grep` users expect, instead of a panic
//! message. Rust ignores SIGPIPE, so a write to the closed pipe fails with EPIPE; `print!`
//! turns that into a panic ("failed printing to stdout"), which [`quiet`] recognises and
//! [`guard`] turns back into an exit code. An `Error::Io` of kind `BrokenPipe` (a write to
//! stdout that returns its error) is treated the same way by [`is_broken_pipe`].

use std::any::Any;

/// True for the panic payload of `print!` / `println!` on a closed pipe.
fn is_print_on_closed_pipe(payload: &(dyn Any + Send)) -> bool {
    let msg = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    msg.starts_with("failed printing to stdout") && msg.contains(&format!("(os error {})", EPIPE))
}

/// EPIPE on Linux and the BSDs.
const EPIPE: i32 = 32;

/// Installs a panic hook that says nothing for a print to a closed stdout and defers to
/// the previous hook otherwise.
pub fn quiet() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_print_on_closed_pipe(info.payload()) {
            previous(info);
        }
    }));
}

/// Runs `f`; a print to a closed stdout ends it with exit code 0, any other panic goes on.
pub fn guard(f: impl FnOnce() -> i32) -> i32 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(payload) if is_print_on_closed_pipe(payload.as_ref()) => 0,
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// True for an error that is a write to a closed pipe.
pub fn is_broken_pipe(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}
