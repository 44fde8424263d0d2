//! `network = "none"` for a stdio server: what the child can reach, and
//! the two existing mechanisms that make it so.
//!
//! Rules (Linux; elsewhere `none` is declared only, and the server's
//! status line says so):
//! - **Network namespace.** The server runs under `unshare -rn`: a new
//!   user and network namespace whose only device is a loopback that is
//!   down. No IP route out exists, this machine's loopback included, and
//!   abstract unix sockets (which belong to a network namespace) are the
//!   namespace's own, so the host's are out of reach.
//! - **Seccomp filter.** The process is started from a thread that first
//!   installs a seccomp filter (compiled by the `seccompiler` crate;
//!   inherited by the child and everything it starts, kept across
//!   `execve`, never removable): `socket(2)` fails with `EACCES` for every
//!   family but `AF_INET`, `AF_INET6` (both only reach the empty
//!   namespace) and `AF_NETLINK` (the namespace's own routing tables);
//!   `socketpair(2)` only makes connected `AF_UNIX` stream or seqpacket
//!   pairs (a datagram pair could `sendto` a path); `io_uring`, which
//!   makes sockets without those calls, is refused; x32 system calls are
//!   refused. So the child cannot make a socket that could name a path:
//!   **no host unix socket is reachable, wherever it lives in the
//!   filesystem** (`/tmp`, `/run`, a home directory, a docker or D-Bus
//!   socket, an ssh agent), nor `AF_VSOCK`, `AF_PACKET` and the rest.
//!   The thread exists only to spawn and ends at once, so the host itself
//!   is never filtered. `no_new_privs` is set with it: a set-user-ID
//!   program the server starts gains nothing.
//! - **Environment.** Agent-socket variables (`SSH_AUTH_SOCK`,
//!   `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, ...) never reach any
//!   child unless passed explicitly: the spawn policy's deny-list, for
//!   every child, not only these.
//!
//! What `none` does not cover: the filesystem (the server reads and
//! writes what its user may), other processes' inherited descriptors (a
//! child gets only its stdio pipes), signals to processes of the same
//! user, and a program that is not a native binary of the host's
//! architecture (a 32-bit program is killed by the filter's architecture
//! check at its first system call).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Why a confined process could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineError {
    #[error("the seccomp filter could not be built: {0}")]
    Filter(String),
    #[error("the seccomp filter could not be installed: {0}")]
    Install(String),
    #[error("{0}")]
    Spawn(std::io::Error),
    #[error("the spawning thread ended without a result")]
    Thread,
}

/// The errno every refused call gets: "Permission denied".
const REFUSED: u32 = libc::EACCES as u32;

/// Socket families a `network = "none"` child may still create: they reach
/// only its own empty network namespace.
const FAMILIES: [i32; 3] = [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK];

/// `socketpair` types (the low bits of the type argument) that cannot
/// address anything: connected stream and seqpacket pairs.
const PAIR_TYPES: [u64; 2] = [libc::SOCK_STREAM as u64, libc::SOCK_SEQPACKET as u64];

/// System call numbers at and above this are x32's, which a filter written
/// for x86-64 numbers would let through.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, ConfineError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
        .map_err(|e| ConfineError::Filter(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, ConfineError> {
    SeccompRule::new(conditions).map_err(|e| ConfineError::Filter(e.to_string()))
}

/// The filter of the module docs, for this machine's architecture.
pub(crate) fn program() -> Result<BpfProgram, ConfineError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| ConfineError::Filter(e.to_string()))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // socket(family, ...): refused unless the family is one of FAMILIES.
    let other_family = FAMILIES
        .iter()
        .map(|&f| cond(0, SeccompCmpOp::Ne, f as u64))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_socket, vec![rule(other_family)?]);
    // socketpair(family, type, ...): refused unless AF_UNIX and a pair type.
    let mut pair = vec![rule(vec![cond(
        0,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?];
    for kind in (0..16u64).filter(|k| !PAIR_TYPES.contains(k)) {
        pair.push(rule(vec![cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?])?);
    }
    rules.insert(libc::SYS_socketpair, pair);
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(REFUSED),
        arch,
    )
    .map_err(|e| ConfineError::Filter(e.to_string()))?;
    let mut program =
        BpfProgram::try_from(filter).map_err(|e| ConfineError::Filter(e.to_string()))?;
    if arch == TargetArch::x86_64 {
        refuse_x32(&mut program);
    }
    Ok(program)
}

/// Inserts, after the architecture check `seccompiler` puts first (three
/// instructions), a check that refuses every x32 system call number.
fn refuse_x32(program: &mut BpfProgram) {
    use seccompiler::sock_filter;
    // Opcodes from linux/bpf_common.h.
    const LD_W_ABS: u16 = 0x20; // BPF_LD (0x00) | BPF_W (0x00) | BPF_ABS (0x20)
    const JMP_JGE_K: u16 = 0x35; // BPF_JMP (0x05) | BPF_JGE (0x30) | BPF_K (0x00)
    const RET_K: u16 = 0x06; // BPF_RET (0x06) | BPF_K (0x00)
    let check = [
        // Load the system call number (offset 0 of `seccomp_data`).
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // x32 → the next instruction (refuse); else skip it.
        sock_filter {
            code: JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | REFUSED,
        },
    ];
    let at = 3.min(program.len());
    program.splice(at..at, check);
}

/// Whether the filter can be built and installed here: a supported
/// architecture and a kernel with seccomp filters.
pub(crate) fn available() -> bool {
    program().is_ok()
        && std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|status| status.lines().any(|l| l.starts_with("Seccomp_filters:")))
}

/// Starts `command` from a new thread that installs the filter first, so
/// the child (and all it starts) inherits it and the host does not.
pub(crate) async fn spawn(
    mut command: tokio::process::Command,
) -> Result<tokio::process::Child, ConfineError> {
    let program = program()?;
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("oscova-mcp-confine".to_owned())
        .spawn(move || {
            let spawned = seccompiler::apply_filter(&program)
                .map_err(|e| ConfineError::Install(e.to_string()))
                .and_then(|()| {
                    let _runtime = runtime.enter();
                    command.spawn().map_err(ConfineError::Spawn)
                });
            let _ = tx.send(spawned);
        })
        .map_err(ConfineError::Spawn)?;
    rx.await.map_err(|_| ConfineError::Thread)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_builds_with_the_x32_check_after_the_architecture_check() {
        let program = program().expect("a filter for this architecture");
        if std::env::consts::ARCH == "x86_64" {
            let x32 = program.get(4).expect("the x32 check");
            assert_eq!(x32.k, X32_SYSCALL_BIT);
        }
        assert!(available());
    }
}
