//! Reading a prompt file whole.
//!
//! On wasm32-wasip2, `std::fs::read` goes through wasi-libc: open, two stats, an input
//! stream and its pollable, a read per chunk plus the one that finds the end, and a drop
//! for each resource: about 17 host calls per file (devhost's `--host-call-census`), and a
//! chat turn checks 12 prompt files. Straight through `wasi:filesystem` it is `open-at`,
//! one `read` and the descriptor's drop. Elsewhere (tests, tools) it is `std::fs::read`.

use std::io;
use std::path::Path;

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    wasi_p2::read(path)
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi_p2 {
    use std::cell::RefCell;
    use std::io;
    use std::path::Path;
    use wasi::filesystem::preopens::get_directories;
    use wasi::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

    /// Asked for at a time; a prompt is a few KiB.
    const CHUNK: u64 = 64 * 1024;

    thread_local! {
        /// The instance's preopened directories, asked for once.
        static PREOPENS: RefCell<Option<Vec<(Descriptor, String)>>> = const { RefCell::new(None) };
    }

    pub fn read(path: &Path) -> io::Result<Vec<u8>> {
        let path = path
            .to_str()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path is not UTF-8"))?;
        PREOPENS.with_borrow_mut(|preopens| {
            let preopens = preopens.get_or_insert_with(get_directories);
            let (dir, relative) = resolve(preopens, path).ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "under no preopened directory")
            })?;
            let file = dir
                .open_at(
                    PathFlags::SYMLINK_FOLLOW,
                    relative,
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .map_err(io_error)?;
            let mut bytes = Vec::new();
            loop {
                let (chunk, end) = file.read(CHUNK, bytes.len() as u64).map_err(io_error)?;
                let short = (chunk.len() as u64) < CHUNK;
                bytes.extend_from_slice(&chunk);
                // A regular file reads short only at its end.
                if end || short {
                    return Ok(bytes);
                }
            }
        })
    }

    /// The preopen with the longest path that `path` lies under, and the rest of `path`.
    fn resolve<'a>(
        preopens: &'a [(Descriptor, String)],
        path: &'a str,
    ) -> Option<(&'a Descriptor, &'a str)> {
        preopens
            .iter()
            .filter_map(|(dir, prefix)| {
                let prefix = prefix.trim_end_matches('/');
                let rest = path.strip_prefix(prefix)?;
                let rest = match rest.strip_prefix('/') {
                    Some(rest) => rest,
                    None if rest.is_empty() => ".",
                    None => return None,
                };
                Some((prefix.len(), dir, rest))
            })
            .max_by_key(|(len, _, _)| *len)
            .map(|(_, dir, rest)| (dir, rest))
    }

    fn io_error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, code.message())
    }
}
