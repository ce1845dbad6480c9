//! Lowering of C loops: `while`, `do` and `for`, each a head block (marked as a loop head), its
//! body with its `break` and `continue` targets, and its exit.

use tree_sitter::Node;

use super::Lowerer;
use crate::ir::*;

impl Lowerer<'_> {
    /// `while (c) S`: the head tests `c`, the body jumps back to it.
    pub(super) fn while_loop(&mut self, node: Node, loc: Loc) {
        let head = self.new_loop_head(loc);
        let (body, exit) = (self.new_block(loc), self.new_block(loc));
        self.jump(head);
        self.start_block(head);
        if let Some(c) = node.child_by_field_name("condition") {
            self.cond(c, body, exit);
        }
        self.start_block(body);
        self.loop_body(node.child_by_field_name("body"), exit, head);
        self.jump(head);
        self.start_block(exit);
    }

    /// `do S while (c);`: the body first, then the test, back to the head.
    pub(super) fn do_loop(&mut self, node: Node, loc: Loc) {
        let head = self.new_loop_head(loc);
        let (check, exit) = (self.new_block(loc), self.new_block(loc));
        self.jump(head);
        self.start_block(head);
        self.loop_body(node.child_by_field_name("body"), exit, check);
        self.jump(check);
        self.start_block(check);
        match node.child_by_field_name("condition") {
            Some(c) => self.cond(c, head, exit),
            None => self.jump(exit),
        }
        self.start_block(exit);
    }

    /// `for (init; c; step) S`: in a scope of its own, the step after the body.
    pub(super) fn for_loop(&mut self, node: Node, loc: Loc) {
        self.push_scope();
        if let Some(init) = node.child_by_field_name("initializer") {
            if init.kind() == "declaration" {
                self.local_declaration(init);
            } else {
                self.discard(init);
            }
        }
        let head = self.new_loop_head(loc);
        let (body, step, exit) = (
            self.new_block(loc),
            self.new_block(loc),
            self.new_block(loc),
        );
        self.jump(head);
        self.start_block(head);
        match node.child_by_field_name("condition") {
            Some(c) => self.cond(c, body, exit),
            None => self.jump(body),
        }
        self.start_block(body);
        self.loop_body(node.child_by_field_name("body"), exit, step);
        self.jump(step);
        self.start_block(step);
        if let Some(u) = node.child_by_field_name("update") {
            self.discard(u);
        }
        self.jump(head);
        self.start_block(exit);
        self.pop_scope();
    }

    fn new_loop_head(&mut self, loc: Loc) -> BlockId {
        let b = self.new_block(loc);
        if let Some(fs) = self.fs.as_mut() {
            fs.blocks[b.0 as usize].loop_head = true;
        }
        b
    }

    fn loop_body(&mut self, body: Option<Node>, brk: BlockId, cont: BlockId) {
        if let Some(fs) = self.fs.as_mut() {
            fs.break_targets.push(brk);
            fs.continue_targets.push(cont);
        }
        if let Some(b) = body {
            self.statement(b);
        }
        if let Some(fs) = self.fs.as_mut() {
            fs.break_targets.pop();
            fs.continue_targets.pop();
        }
    }
}
