//! Execution throttling through model-specific registers, as the
//! simulator models it (`cachepart_machine::throttle`): a core's duty
//! cycle (IA32_CLOCK_MODULATION, MSR 0x19A) and its prefetcher word
//! (MISC_FEATURE_CONTROL, MSR 0x1A4, bits 0-3, a set bit turning one
//! prefetcher off; the other bits of the register are kept as found).
//!
//! Registers are read and written through `DEV/cpu/N/msr` (the `msr`
//! module), 8 bytes at the register's offset. [`MsrControl`] is made only
//! with an explicit allow flag, refuses a CPU model whose bits it does not
//! know ([`crate::cpu`]), saves each register the first time it writes it
//! and restores every saved value on [`MsrControl::restore`] or drop.
//! Tests use a sparse file under a fake `/dev` ([`crate::fake::msr_device`]).

use crate::cpu::{CpuModel, ModelInfo};
use crate::error::{Error, Result};
use cachepart_machine::Duty;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// IA32_CLOCK_MODULATION.
pub const IA32_CLOCK_MODULATION: u32 = 0x19a;
/// MISC_FEATURE_CONTROL: the prefetcher disable bits.
pub const MISC_FEATURE_CONTROL: u32 = 0x1a4;
/// The prefetcher bits of MSR 0x1A4 (L2 streamer, L2 adjacent line, DCU
/// next line, DCU IP stride).
pub const PREFETCH_BITS: u64 = 0xf;
/// The enable bit of on-demand clock modulation.
const MODULATION_ENABLE: u64 = 1 << 4;

/// The register value that runs a core at `duty`: 0 (modulation off) at
/// full speed, else the enable bit (4) and the duty in bits 3:1 (eighths)
/// or, with extended modulation, bits 3:0 (sixteenths; an eighth k is
/// 2k/16, the same bits).
pub fn encode_duty(duty: Duty, extended: bool) -> Result<u64> {
    if duty.is_full() {
        return Ok(0);
    }
    match duty.steps() {
        8 => Ok(MODULATION_ENABLE | u64::from(duty.on()) << 1),
        16 if extended => Ok(MODULATION_ENABLE | u64::from(duty.on())),
        _ => Err(Error::Msr {
            msr: IA32_CLOCK_MODULATION,
            why: format!("duty {duty}: this CPU has no extended clock modulation (8 steps only)"),
        }),
    }
}

/// The duty cycle a register value gives (full speed when modulation is
/// off or the duty field is the reserved 0); even sixteenths read as
/// eighths.
pub fn decode_duty(value: u64, extended: bool) -> Duty {
    if value & MODULATION_ENABLE == 0 {
        return Duty::FULL;
    }
    let d = if extended {
        // Sixteenths, shown as eighths where they are one (2k/16 = k/8).
        match (value & 0xf) as u32 {
            on if on % 2 == 0 => Duty::new(on / 2, 8),
            on => Duty::new(on, 16),
        }
    } else {
        Duty::new(((value >> 1) & 0x7) as u32, 8)
    };
    d.unwrap_or(Duty::FULL)
}

/// One CPU's MSR device file.
#[derive(Debug)]
struct Device {
    path: PathBuf,
    file: File,
}

impl Device {
    fn open(dev_root: &Path, cpu: u32) -> Result<Device> {
        let path = dev_root.join(format!("cpu/{cpu}/msr"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok(Device { path, file })
    }

    fn read(&self, msr: u32) -> Result<u64> {
        let mut b = [0u8; 8];
        self.file
            .read_exact_at(&mut b, u64::from(msr))
            .map_err(|e| Error::io(format!("{} (MSR {msr:#x})", self.path.display()), e))?;
        Ok(u64::from_le_bytes(b))
    }

    fn write(&self, msr: u32, value: u64) -> Result<()> {
        self.file
            .write_all_at(&value.to_le_bytes(), u64::from(msr))
            .map_err(|e| Error::io(format!("{} (MSR {msr:#x})", self.path.display()), e))
    }
}

/// Duty cycles and prefetcher words of cores, with the values found
/// restored at the end.
#[derive(Debug)]
pub struct MsrControl {
    dev_root: PathBuf,
    model: ModelInfo,
    devices: BTreeMap<u32, Device>,
    /// (cpu, msr) -> the value found before the first write.
    saved: BTreeMap<(u32, u32), u64>,
}

impl MsrControl {
    /// MSR access under `dev_root` (`/dev`) for CPU `cpu`. Refused unless
    /// `allowed` (the operator's `--allow-msr`) and the model is one whose
    /// bits cachepart knows.
    pub fn new(dev_root: &Path, cpu: &CpuModel, allowed: bool) -> Result<MsrControl> {
        if !allowed {
            return Err(Error::Msr {
                msr: IA32_CLOCK_MODULATION,
                why: "MSR writes are off; pass --allow-msr to throttle cores".into(),
            });
        }
        let model = cpu.known().ok_or_else(|| Error::Msr {
            msr: MISC_FEATURE_CONTROL,
            why: format!(
                "{}: not a CPU model whose clock-modulation and prefetcher bits cachepart knows",
                cpu.describe()
            ),
        })?;
        Ok(MsrControl {
            dev_root: dev_root.to_path_buf(),
            model,
            devices: BTreeMap::new(),
            saved: BTreeMap::new(),
        })
    }

    /// The model's entry in cachepart's table.
    pub fn model(&self) -> &ModelInfo {
        &self.model
    }

    fn device(&mut self, cpu: u32) -> Result<&Device> {
        if !self.devices.contains_key(&cpu) {
            let d = Device::open(&self.dev_root, cpu)?;
            self.devices.insert(cpu, d);
        }
        Ok(&self.devices[&cpu])
    }

    /// Reads register `msr` of `cpu`.
    pub fn read(&mut self, cpu: u32, msr: u32) -> Result<u64> {
        self.device(cpu)?.read(msr)
    }

    fn write(&mut self, cpu: u32, msr: u32, value: u64) -> Result<()> {
        let d = self.device(cpu)?;
        let found = d.read(msr)?;
        d.write(msr, value)?;
        self.saved.entry((cpu, msr)).or_insert(found);
        Ok(())
    }

    /// Runs core `cpu` at `duty`.
    pub fn set_duty(&mut self, cpu: u32, duty: Duty) -> Result<()> {
        let value = encode_duty(duty, self.model.extended_modulation)?;
        let keep = self.read(cpu, IA32_CLOCK_MODULATION)? & !0x1f;
        self.write(cpu, IA32_CLOCK_MODULATION, keep | value)
    }

    /// The duty cycle core `cpu` runs at.
    pub fn duty(&mut self, cpu: u32) -> Result<Duty> {
        let v = self.read(cpu, IA32_CLOCK_MODULATION)?;
        Ok(decode_duty(v, self.model.extended_modulation))
    }

    /// Sets core `cpu`'s prefetcher word (bits 0-3 of MSR 0x1A4; the
    /// register's other bits are kept).
    pub fn set_prefetchers(&mut self, cpu: u32, word: u64) -> Result<()> {
        if word & !PREFETCH_BITS != 0 {
            return Err(Error::Msr {
                msr: MISC_FEATURE_CONTROL,
                why: format!(
                    "prefetcher word {word:#x}: only bits 0-3 (L2 streamer, L2 adjacent line, DCU next line, DCU IP stride) may be set"
                ),
            });
        }
        let keep = self.read(cpu, MISC_FEATURE_CONTROL)? & !PREFETCH_BITS;
        self.write(cpu, MISC_FEATURE_CONTROL, keep | word)
    }

    /// Writes back every value found before cachepart's first write (each
    /// register once); the first failure is returned after trying all.
    pub fn restore(&mut self) -> Result<()> {
        let mut first = None;
        for ((cpu, msr), v) in std::mem::take(&mut self.saved) {
            if let Err(e) = self.device(cpu).and_then(|d| d.write(msr, v)) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for MsrControl {
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake;

    fn skx() -> CpuModel {
        CpuModel {
            vendor: "GenuineIntel".into(),
            family: 6,
            model: 0x55,
            model_name: "Xeon".into(),
            mhz: None,
        }
    }

    #[test]
    fn duty_encoding_follows_the_sdm() {
        let d = |s: &str| s.parse::<Duty>().unwrap();
        assert_eq!(encode_duty(Duty::FULL, false).unwrap(), 0);
        assert_eq!(encode_duty(d("1/8"), false).unwrap(), 0x12);
        assert_eq!(encode_duty(d("7/8"), false).unwrap(), 0x1e);
        assert_eq!(encode_duty(d("3/16"), true).unwrap(), 0x13);
        // An eighth is the same bits as its sixteenths.
        assert_eq!(
            encode_duty(d("5/8"), true).unwrap(),
            encode_duty(d("10/16"), true).unwrap()
        );
        assert!(encode_duty(d("3/16"), false).is_err());
        for on in 1..=8 {
            let x = Duty::new(on, 8).unwrap();
            assert_eq!(decode_duty(encode_duty(x, false).unwrap(), false), x);
        }
        assert_eq!(decode_duty(0x13, true), d("3/16"));
        assert_eq!(decode_duty(0x10, false), Duty::FULL);
    }

    #[test]
    fn refused_without_the_flag_or_on_an_unknown_model() {
        let t = tempfile::tempdir().unwrap();
        let e = MsrControl::new(t.path(), &skx(), false).unwrap_err();
        assert!(e.to_string().contains("--allow-msr"), "{e}");
        let mut amd = skx();
        amd.vendor = "AuthenticAMD".into();
        let e = MsrControl::new(t.path(), &amd, true).unwrap_err();
        assert!(
            e.to_string().contains("AuthenticAMD family 6 model 0x55"),
            "{e}"
        );
    }

    #[test]
    fn writes_at_the_offsets_and_restores_what_was_found() {
        let t = tempfile::tempdir().unwrap();
        let dev = t.path();
        fake::msr_device(dev, 2, &[(MISC_FEATURE_CONTROL, 0x4_0000_0002)]).unwrap();
        let mut m = MsrControl::new(dev, &skx(), true).unwrap();
        m.set_duty(1, "4/8".parse().unwrap()).unwrap();
        m.set_prefetchers(1, 0x5).unwrap();
        m.set_prefetchers(1, 0x1).unwrap();
        assert_eq!(m.read(1, IA32_CLOCK_MODULATION).unwrap(), 0x18);
        // The reserved bits above the prefetchers stay as found.
        assert_eq!(m.read(1, MISC_FEATURE_CONTROL).unwrap(), 0x4_0000_0001);
        assert_eq!(m.duty(1).unwrap(), "4/8".parse().unwrap());
        assert_eq!(m.read(0, MISC_FEATURE_CONTROL).unwrap(), 0x4_0000_0002);
        let e = m.set_prefetchers(0, 0x10).unwrap_err();
        assert!(e.to_string().contains("only bits 0-3"), "{e}");
        // The device is the register file: 8 bytes at the MSR's offset.
        let raw = std::fs::read(dev.join("cpu/1/msr")).unwrap();
        let at = MISC_FEATURE_CONTROL as usize;
        assert_eq!(
            u64::from_le_bytes(raw[at..at + 8].try_into().unwrap()),
            0x4_0000_0001
        );
        drop(m);
        let mut m = MsrControl::new(dev, &skx(), true).unwrap();
        assert_eq!(m.read(1, IA32_CLOCK_MODULATION).unwrap(), 0);
        assert_eq!(m.read(1, MISC_FEATURE_CONTROL).unwrap(), 0x4_0000_0002);
        let e = m.read(5, IA32_CLOCK_MODULATION).unwrap_err();
        assert!(e.to_string().contains("cpu/5/msr"), "{e}");
    }
}
