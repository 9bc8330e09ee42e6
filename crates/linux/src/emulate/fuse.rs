//! The FUSE adapter: serves a [`State`] through the `fuser` crate, with
//! the kernel's file semantics. Files are opened with direct I/O, so
//! every `write()` reaches the emulated kernel as one write and every
//! read sees the state of the moment the file was opened (as seq_file
//! does); nothing is cached (attributes and entries expire at once).
//! Inode numbers are never reused: a group removed and made again gets
//! new ones, as on kernfs.

use super::node::{resolve, Dir, File, Node};
use super::state::{State, Target};
use fuser::{
    FileAttr, FileType, Filesystem, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::time::{Duration, SystemTime};

const TTL: Duration = Duration::ZERO;
const ROOT_INO: u64 = 1;
/// `FOPEN_DIRECT_IO`: bypass the page cache for this open file.
const FOPEN_DIRECT_IO: u32 = 1;

/// The mounted filesystem.
pub struct ResctrlFs {
    state: State,
    paths: HashMap<u64, String>,
    inos: HashMap<String, u64>,
    next_ino: u64,
    open: HashMap<u64, Vec<u8>>,
    next_fh: u64,
    mounted_at: SystemTime,
}

impl ResctrlFs {
    /// A filesystem serving `state`.
    pub fn new(state: State) -> Self {
        let mut fs = ResctrlFs {
            state,
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: ROOT_INO + 1,
            open: HashMap::new(),
            next_fh: 1,
            mounted_at: SystemTime::now(),
        };
        fs.paths.insert(ROOT_INO, String::new());
        fs.inos.insert(String::new(), ROOT_INO);
        fs
    }

    fn ino_of(&mut self, path: &str) -> u64 {
        if let Some(&i) = self.inos.get(path) {
            return i;
        }
        let i = self.next_ino;
        self.next_ino += 1;
        self.inos.insert(path.to_string(), i);
        self.paths.insert(i, path.to_string());
        i
    }

    /// Forgets the inode numbers of `path` and everything under it.
    fn forget_tree(&mut self, path: &str) {
        let prefix = format!("{path}/");
        let gone: Vec<String> = self
            .inos
            .keys()
            .filter(|p| *p == path || p.starts_with(&prefix))
            .cloned()
            .collect();
        for p in gone {
            if let Some(i) = self.inos.remove(&p) {
                self.paths.remove(&i);
            }
        }
    }

    fn node(&self, ino: u64) -> Option<(String, Node)> {
        let path = self.paths.get(&ino)?.clone();
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let node = resolve(&self.state, &parts)?;
        Some((path, node))
    }

    fn attr(&self, ino: u64, node: &Node) -> FileAttr {
        let (kind, perm, nlink) = match node {
            Node::Dir(_) => (FileType::Directory, 0o755, 2),
            Node::File(f) if f.writable() => (FileType::RegularFile, 0o644, 1),
            Node::File(_) => (FileType::RegularFile, 0o444, 1),
        };
        let t = self.mounted_at;
        FileAttr {
            ino,
            size: 0,
            blocks: 0,
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }

    fn child_path(parent: &str, name: &str) -> String {
        if parent.is_empty() {
            name.to_string()
        } else {
            format!("{parent}/{name}")
        }
    }

    fn entry(&mut self, parent: u64, name: &str) -> Option<(u64, Node)> {
        let (ppath, _) = self.node(parent)?;
        let path = Self::child_path(&ppath, name);
        let parts: Vec<&str> = path.split('/').collect();
        let node = resolve(&self.state, &parts)?;
        Some((self.ino_of(&path), node))
    }

    fn write_file(&mut self, f: &File, text: &str, writer: u32) -> super::refusal::Outcome {
        let s = &mut self.state;
        match f {
            File::Schemata(c) => s.write_schemata(c.as_deref(), text),
            File::Mode(c) => s.write_mode(c.as_deref(), text),
            File::Tasks(t) => s.write_tasks(t, text, writer),
            File::Cpus(t, list) => s.write_cpus(t, text, *list),
            _ => Err(super::refusal::Refusal::bare(libc::EACCES)),
        }
    }
}

impl Filesystem for ResctrlFs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        match self.entry(parent, &name.to_string_lossy()) {
            Some((ino, node)) => reply.entry(&TTL, &self.attr(ino, &node), 0),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.node(ino) {
            Some((_, node)) => reply.attr(&TTL, &self.attr(ino, &node)),
            None => reply.error(libc::ENOENT),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        // Truncation (O_TRUNC) is a no-op on kernfs files; ownership and
        // modes are not emulated.
        match self.node(ino) {
            Some(_) if mode.is_some() || uid.is_some() || gid.is_some() => reply.error(libc::EPERM),
            Some((_, node)) => reply.attr(&TTL, &self.attr(ino, &node)),
            None => reply.error(libc::ENOENT),
        }
    }

    fn mkdir(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let name = name.to_string_lossy().into_owned();
        let r = match self.node(parent) {
            Some((_, Node::Dir(Dir::Root))) => self.state.mkdir_ctrl(&name),
            Some((_, Node::Dir(Dir::MonGroups(c)))) => self.state.mkdir_mon(c.as_deref(), &name),
            Some(_) => Err(super::refusal::Refusal::bare(libc::EPERM)),
            None => Err(super::refusal::Refusal::bare(libc::ENOENT)),
        };
        match r.map(|()| self.entry(parent, &name)) {
            Ok(Some((ino, node))) => reply.entry(&TTL, &self.attr(ino, &node), 0),
            Ok(None) => reply.error(libc::EIO),
            Err(e) => reply.error(e.errno),
        }
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let name = name.to_string_lossy().into_owned();
        let Some((ppath, pnode)) = self.node(parent) else {
            return reply.error(libc::ENOENT);
        };
        let child = match &pnode {
            Node::Dir(d) => d
                .children(&self.state)
                .into_iter()
                .find(|(n, _)| *n == name),
            Node::File(_) => None,
        };
        let r = match child {
            None => Err(libc::ENOENT),
            Some((_, Node::Dir(Dir::Group(g)))) => self.state.rmdir_ctrl(&g).map_err(|e| e.errno),
            Some((_, Node::Dir(Dir::MonGroup(Target { ctrl, mon: Some(m) })))) => self
                .state
                .rmdir_mon(ctrl.as_deref(), &m)
                .map_err(|e| e.errno),
            Some((_, Node::Dir(_))) => Err(libc::EPERM),
            Some((_, Node::File(_))) => Err(libc::ENOTDIR),
        };
        match r {
            Ok(()) => {
                self.forget_tree(&Self::child_path(&ppath, &name));
                reply.ok()
            }
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &mut self,
        _req: &Request<'_>,
        _parent: u64,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        reply.error(libc::EACCES)
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        _parent: u64,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        reply.error(libc::EACCES)
    }

    fn unlink(&mut self, _req: &Request<'_>, _parent: u64, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(libc::EPERM)
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        _parent: u64,
        _name: &OsStr,
        _newparent: u64,
        _newname: &OsStr,
        _flags: u32,
        reply: ReplyEmpty,
    ) {
        reply.error(libc::EPERM)
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, flags: i32, reply: ReplyOpen) {
        let Some((_, node)) = self.node(ino) else {
            return reply.error(libc::ENOENT);
        };
        let Node::File(f) = node else {
            return reply.error(libc::EISDIR);
        };
        let acc = flags & libc::O_ACCMODE;
        if acc != libc::O_RDONLY && !f.writable() {
            return reply.error(libc::EACCES);
        }
        let snapshot = if acc == libc::O_WRONLY {
            Vec::new()
        } else {
            f.read(&mut self.state).into_bytes()
        };
        let fh = self.next_fh;
        self.next_fh += 1;
        self.open.insert(fh, snapshot);
        reply.opened(fh, FOPEN_DIRECT_IO)
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyData,
    ) {
        let data = self.open.get(&fh).map(Vec::as_slice).unwrap_or_default();
        let start = usize::try_from(offset).unwrap_or(0).min(data.len());
        let end = start.saturating_add(size as usize).min(data.len());
        reply.data(&data[start..end])
    }

    fn write(
        &mut self,
        req: &Request<'_>,
        ino: u64,
        _fh: u64,
        _offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyWrite,
    ) {
        let Some((_, Node::File(f))) = self.node(ino) else {
            return reply.error(libc::ENOENT);
        };
        let text = String::from_utf8_lossy(data).into_owned();
        match self.write_file(&f, &text, req.pid()) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e.errno),
        }
    }

    fn release(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        fh: u64,
        _flags: i32,
        _lock: Option<u64>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.open.remove(&fh);
        reply.ok()
    }

    fn readdir(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        mut reply: ReplyDirectory,
    ) {
        let Some((path, Node::Dir(d))) = self.node(ino) else {
            return reply.error(libc::ENOTDIR);
        };
        let mut entries: Vec<(u64, FileType, String)> = vec![
            (ino, FileType::Directory, ".".into()),
            (ino, FileType::Directory, "..".into()),
        ];
        for (name, node) in d.children(&self.state) {
            let i = self.ino_of(&Self::child_path(&path, &name));
            let kind = match node {
                Node::Dir(_) => FileType::Directory,
                Node::File(_) => FileType::RegularFile,
            };
            entries.push((i, kind, name));
        }
        let skip = usize::try_from(offset).unwrap_or(0);
        for (k, (i, kind, name)) in entries.into_iter().enumerate().skip(skip) {
            if reply.add(i, (k + 1) as i64, kind, name) {
                break;
            }
        }
        reply.ok()
    }
}
