//! State of one interrupt.

/// The model of one interrupt (one banked copy for SGIs/PPIs).
///
/// Pending state has three sources: the latch (`latch`, set by an edge, a pulse or a write to
/// `ISPENDR`), the input line of a level-sensitive interrupt (`line`), and — for GICv2 SGIs —
/// one pending bit per requesting CPU (`sgi_pending`). While an edge pending state is loaded
/// into a list register the list register owns it (`lr_pending`/`lr_sgi_pending`); `sync`
/// gives it back.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Irq {
    pub enabled: bool,
    pub latch: bool,
    pub line: bool,
    pub active: bool,
    pub priority: u8,
    pub group1: bool,
    pub edge: bool,
    /// GICv2 `ITARGETSR` (SPIs).
    pub targets: u8,
    /// GICv3 `IROUTER` (SPIs), sanitised.
    pub route: u64,
    /// Physical INTID of a hardware-mapped interrupt.
    pub hw: Option<u32>,
    /// GICv2 SGIs: pending requesters held by the model.
    pub sgi_pending: u8,
    /// GICv2 SGIs: requester of the active instance.
    pub active_src: u8,
    /// vCPU whose list registers hold this interrupt (between flush and sync).
    pub in_lr: Option<u16>,
    /// A list register holds the pending state (edge ownership transfer).
    pub lr_pending: bool,
    /// GICv2 SGIs: requesters whose pending state a list register holds.
    pub lr_sgi_pending: u8,
    /// `ICPENDR` hit the interrupt while it was in a list register: model wins at sync.
    pub cpend_req: bool,
    /// `CPENDSGIR` sources cleared while in a list register.
    pub cpend_src: u8,
    /// `ISACTIVER`/`ICACTIVER` hit it while in a list register: model wins at sync.
    pub act_req: Option<bool>,
    /// vCPU that last had it in its list registers while active (sticky routing).
    pub owner: Option<u16>,
}

impl Irq {
    /// Pending as held by the model (excluding list-register-held state).
    pub fn pending(&self) -> bool {
        self.latch || (!self.edge && self.line) || self.sgi_pending != 0
    }
    /// Pending as the guest sees it through `ISPENDR`.
    pub fn pending_visible(&self) -> bool {
        self.pending() || self.lr_pending || self.lr_sgi_pending != 0
    }
    /// Something to do for this interrupt: pending or active.
    pub fn live(&self) -> bool {
        self.pending() || self.active
    }
}
