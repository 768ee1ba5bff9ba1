//! Reference programs run beside ours by the benches (gfan, PHCpack): finding them on
//! `PATH`, a scratch directory for their files, and one timed run (wall and CPU seconds).
//! Every failure is an `Err(String)` naming the program and the cause, never a panic.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// A reference program's answer: its mixed volume, wall and CPU seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    pub mixed_volume: u128,
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
}

/// The executable `name` in the directories of `path` (a `PATH`-style list).
pub fn find_program(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A fresh directory under the system's temporary directory, removed with its contents
/// when dropped.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `pathtrack-TAG-PID-K` (K counts the directories of this process).
    pub fn new(tag: &str) -> Result<ScratchDir, String> {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let k = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pathtrack-{tag}-{}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create the scratch directory {}: {e}", dir.display()))?;
        Ok(ScratchDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A finished run of a reference program: its standard output, wall and CPU seconds.
#[derive(Clone, Debug)]
pub struct Finished {
    pub stdout: String,
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
}

/// Runs `program args` in `dir` with `stdin` as its standard input; an error when it
/// cannot start or exits unsuccessfully (with the last line it wrote).
pub fn run_timed(
    program: &Path,
    args: &[&str],
    stdin: &[u8],
    dir: Option<&Path>,
) -> Result<Finished, String> {
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let cpu0 = children_cpu_seconds();
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if let Some(mut input) = child.stdin.take() {
        // a program that exits without reading all of it is judged by its exit status
        if let Err(e) = input.write_all(stdin) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{name}: writing its input: {e}"));
            }
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{name}: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu0.zip(children_cpu_seconds()).map(|(a, b)| b - a);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = [stderr.as_ref(), stdout.as_str()]
            .iter()
            .find_map(|s| s.lines().rev().find(|l| !l.trim().is_empty()))
            .map_or(String::new(), |l| format!(": {}", l.trim()));
        return Err(format!("{name}: {}{last}", out.status));
    }
    Ok(Finished {
        stdout,
        seconds,
        cpu_seconds,
    })
}

/// CPU seconds (user + system) of the children waited for: fields 16 and 17 (`cutime`,
/// `cstime`) of `/proc/self/stat`, in the kernel's fixed 100 ticks per second.
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the command name (field 2) may contain spaces: count from its closing parenthesis
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(13);
    let cutime: f64 = fields.next()?.parse().ok()?;
    let cstime: f64 = fields.next()?.parse().ok()?;
    Some((cutime + cstime) / 100.0)
}

/// Test helper: an executable shell script `dir/name` with `body` after its `#!/bin/sh`
/// line (a stand-in for a reference program).
#[cfg(test)]
pub fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join(name);
    std::fs::write(&script, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_present_programs() {
        let dir = ScratchDir::new("find").unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        assert_eq!(find_program("sh", Some(&path)), None);
        assert_eq!(find_program("sh", None), None);
        let sh = find_program("sh", Some(OsStr::new("/bin:/usr/bin"))).unwrap();
        let out = run_timed(&sh, &["-c", "cat; echo done"], b"in\n", Some(dir.path())).unwrap();
        assert_eq!(out.stdout, "in\ndone\n");
        assert!(out.seconds >= 0.0);
        // a failing program: its status and last line in the message
        let e = run_timed(&sh, &["-c", "echo why >&2; exit 3"], b"", None).unwrap_err();
        assert!(
            e.starts_with("sh: exit status: 3") && e.ends_with(": why"),
            "{e}"
        );
        // one that exits without reading its input
        let e = run_timed(&sh, &["-c", "exit 4"], &[b'x'; 1 << 20], None).unwrap_err();
        assert!(e.contains("exit status: 4"), "{e}");
        let gone = dir.path().to_path_buf();
        drop(dir);
        assert!(!gone.exists());
    }
}
