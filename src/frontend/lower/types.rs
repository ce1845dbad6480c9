//! Lowering of declaration specifiers and declarators to C types, with struct/union layout.

use tree_sitter::Node;

use super::{adjust_param_type, Declared, Lowerer, Param, Specs, Symbol, Tag};
use crate::ir::consteval;
use crate::ir::*;

impl<'s> Lowerer<'s> {
    /// Storage class, qualifiers, attributes and the type specifier of a declaration-like node.
    pub(super) fn specs(&mut self, node: Node) -> Specs {
        let mut specs = Specs::default();
        let mut c = node.walk();
        for ch in node.children(&mut c) {
            match ch.kind() {
                "storage_class_specifier" => match self.node_text(ch) {
                    "static" => specs.is_static = true,
                    "extern" => specs.is_extern = true,
                    "typedef" => specs.is_typedef = true,
                    _ => {}
                },
                "type_qualifier" => match self.node_text(ch) {
                    "volatile" | "__volatile__" | "__volatile" => specs.volatile = true,
                    "const" | "__const" | "__const__" => specs.is_const = true,
                    "_Noreturn" | "noreturn" => specs.noreturn = true,
                    _ => {}
                },
                "attribute_specifier" | "attribute_declaration"
                    if self.node_text(ch).contains("noreturn") =>
                {
                    specs.noreturn = true;
                }
                _ => {}
            }
        }
        if let Some(t) = node.child_by_field_name("type") {
            specs.ty = Some(self.type_specifier(t));
        }
        specs
    }

    pub(super) fn type_specifier(&mut self, node: Node) -> CType {
        match node.kind() {
            "primitive_type" => {
                let name = self.node_text(node);
                if let Some(t) = self.typedef_type(name) {
                    return t;
                }
                primitive_type(name).unwrap_or(CType::Unknown)
            }
            "sized_type_specifier" => self.sized_type(node),
            "type_identifier" => {
                let name = self.node_text(node);
                if let Some(t) = self.typedef_type(name) {
                    return t;
                }
                if let Some(t) = primitive_type(name) {
                    return t;
                }
                self.fallback(node, FallbackKind::UnknownType, "unknown type name");
                CType::Unknown
            }
            "struct_specifier" => self.record_specifier(node, false),
            "union_specifier" => self.record_specifier(node, true),
            "enum_specifier" => self.enum_specifier(node),
            "macro_type_specifier" => {
                // `typeof(T)` / `__typeof__(x)`.
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.node_text(n))
                    .unwrap_or("");
                let desc = node.child_by_field_name("type");
                if matches!(name, "typeof" | "__typeof__" | "__typeof") {
                    if let Some(d) = desc {
                        if let Some(t) = d.child_by_field_name("type") {
                            if t.kind() == "type_identifier"
                                && d.child_by_field_name("declarator").is_none()
                            {
                                if let Some(Symbol::Var(_, ty)) = self.lookup(self.node_text(t)) {
                                    return ty.clone();
                                }
                            }
                        }
                        return self.type_descriptor(d);
                    }
                }
                self.fallback(node, FallbackKind::UnknownType, "unsupported type");
                CType::Unknown
            }
            _ => {
                self.fallback(node, FallbackKind::UnknownType, "unsupported type");
                CType::Unknown
            }
        }
    }

    /// `unsigned long int`, `long long`, `short`, `signed char`, `long double`, ...
    fn sized_type(&mut self, node: Node) -> CType {
        let mut unsigned = false;
        let mut longs = 0;
        let mut short = false;
        let mut c = node.walk();
        let mut base: Option<CType> = None;
        for ch in node.children(&mut c) {
            match ch.kind() {
                "unsigned" => unsigned = true,
                "long" => longs += 1,
                "short" => short = true,
                "signed" => {}
                "primitive_type" | "type_identifier" => {
                    base = Some(match self.node_text(ch) {
                        "int" => CType::INT,
                        "char" => CType::Int(IntKind::Char),
                        "double" => CType::Float(FloatKind::Double),
                        "__int128" => CType::Int(IntKind::Int128),
                        other => primitive_type(other).unwrap_or(CType::INT),
                    })
                }
                _ => {}
            }
        }
        let text = self.node_text(node);
        let has_signed = text.split_whitespace().any(|w| w == "signed");
        match base {
            Some(CType::Int(IntKind::Char)) => CType::Int(if unsigned {
                IntKind::UChar
            } else if has_signed {
                IntKind::SChar
            } else {
                IntKind::Char
            }),
            Some(CType::Float(_)) => CType::Float(if longs > 0 {
                FloatKind::LongDouble
            } else {
                FloatKind::Double
            }),
            Some(CType::Int(IntKind::Int128)) => CType::Int(if unsigned {
                IntKind::UInt128
            } else {
                IntKind::Int128
            }),
            _ => {
                let k = if short {
                    IntKind::Short
                } else if longs >= 2 {
                    IntKind::LongLong
                } else if longs == 1 {
                    IntKind::Long
                } else {
                    IntKind::Int
                };
                CType::Int(if unsigned { k.to_unsigned() } else { k })
            }
        }
    }

    pub(super) fn type_descriptor(&mut self, node: Node) -> CType {
        let base = node
            .child_by_field_name("type")
            .map_or(CType::INT, |t| self.type_specifier(t));
        match node.child_by_field_name("declarator") {
            Some(d) => self.declarator(Some(d), base).ty,
            None => base,
        }
    }

    /// Applies a (possibly abstract) declarator to a base type.
    pub(super) fn declarator(&mut self, node: Option<Node>, base: CType) -> Declared {
        let Some(node) = node else {
            return Declared {
                name: None,
                ty: base,
                params: None,
                noreturn: false,
            };
        };
        match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => Declared {
                name: Some(self.node_text(node).to_string()),
                ty: base,
                params: None,
                noreturn: false,
            },
            "pointer_declarator" | "abstract_pointer_declarator" => {
                let inner = node.child_by_field_name("declarator");
                self.declarator(inner, CType::ptr_to(base))
            }
            "array_declarator" | "abstract_array_declarator" => {
                let len = node.child_by_field_name("size").and_then(|s| {
                    if s.kind() == "*" {
                        return None;
                    }
                    let e = self.lower_const_expr(s);
                    consteval::eval(&e).and_then(|v| u64::try_from(v).ok())
                });
                let inner = node.child_by_field_name("declarator");
                self.declarator(inner, CType::Array(Box::new(base), len))
            }
            "function_declarator" | "abstract_function_declarator" => {
                let (params, variadic, prototyped) = match node.child_by_field_name("parameters") {
                    Some(p) => self.parameter_list(p),
                    None => (Vec::new(), false, false),
                };
                let mut noreturn = false;
                let mut c = node.walk();
                for ch in node.children(&mut c) {
                    if ch.kind() == "attribute_specifier" && self.node_text(ch).contains("noreturn")
                    {
                        noreturn = true;
                    }
                }
                let ft = FuncType {
                    ret: base,
                    params: params.iter().map(|p| p.ty.clone()).collect(),
                    variadic,
                    prototyped,
                    noreturn: false,
                };
                let inner = node.child_by_field_name("declarator");
                let direct = inner.is_some_and(|i| {
                    matches!(
                        i.kind(),
                        "identifier" | "field_identifier" | "type_identifier"
                    ) || (i.kind() == "parenthesized_declarator"
                        && i.named_child(0).is_some_and(|n| n.kind() == "identifier"))
                });
                let mut d = self.declarator(inner, CType::Function(Box::new(ft)));
                if direct {
                    d.params = Some(params);
                }
                d.noreturn |= noreturn;
                d
            }
            "parenthesized_declarator" | "abstract_parenthesized_declarator" => {
                let mut c = node.walk();
                let inner = node
                    .named_children(&mut c)
                    .find(|n| n.kind() != "ms_call_modifier" && n.kind() != "attribute_specifier");
                self.declarator(inner, base)
            }
            "attributed_declarator" => {
                let mut c = node.walk();
                let children: Vec<Node> = node.named_children(&mut c).collect();
                let noreturn = children.iter().any(|n| {
                    n.kind() == "attribute_declaration" && self.node_text(*n).contains("noreturn")
                });
                let inner = children
                    .into_iter()
                    .find(|n| n.kind() != "attribute_declaration");
                let mut d = self.declarator(inner, base);
                d.noreturn |= noreturn;
                d
            }
            "init_declarator" => self.declarator(node.child_by_field_name("declarator"), base),
            _ => {
                // gnu_asm_expression (asm labels), ms modifiers: no effect on the type.
                Declared {
                    name: None,
                    ty: base,
                    params: None,
                    noreturn: false,
                }
            }
        }
    }

    /// Parameters, variadic flag and whether the list is a prototype.
    fn parameter_list(&mut self, node: Node) -> (Vec<Param>, bool, bool) {
        let mut params = Vec::new();
        let mut variadic = false;
        let mut prototyped = false;
        let mut c = node.walk();
        let children: Vec<Node> = node.named_children(&mut c).collect();
        for ch in children {
            match ch.kind() {
                "parameter_declaration" => {
                    let decl = ch.child_by_field_name("declarator");
                    let ty_node = ch.child_by_field_name("type");
                    // `f(x)` in K&R style parses as a parameter whose "type" is the name `x`.
                    if decl.is_none() {
                        if let Some(t) = ty_node {
                            if t.kind() == "type_identifier" {
                                let name = self.node_text(t);
                                if self.typedef_type(name).is_none()
                                    && primitive_type(name).is_none()
                                {
                                    params.push(Param {
                                        name: Some(name.to_string()),
                                        ty: CType::INT,
                                    });
                                    continue;
                                }
                            }
                        }
                    }
                    prototyped = true;
                    let specs = self.specs(ch);
                    let base = specs.ty.unwrap_or(CType::INT);
                    let d = self.declarator(decl, base);
                    if d.name.is_none() && d.ty == CType::Void {
                        continue; // `(void)`
                    }
                    params.push(Param {
                        name: d.name,
                        ty: adjust_param_type(d.ty),
                    });
                }
                "identifier" => params.push(Param {
                    name: Some(self.node_text(ch).to_string()),
                    ty: CType::INT,
                }),
                "variadic_parameter" => {
                    variadic = true;
                    prototyped = true;
                }
                _ => {}
            }
        }
        if node.named_child_count() == 0 && self.node_text(node).contains("void") {
            prototyped = true;
        }
        (params, variadic, prototyped)
    }

    fn record_specifier(&mut self, node: Node, is_union: bool) -> CType {
        let tag = node
            .child_by_field_name("name")
            .map(|n| self.node_text(n).to_string());
        let body = node.child_by_field_name("body");
        let Some(body) = body else {
            if let Some(t) = &tag {
                if let Some(Tag::Record(id)) = self.lookup_tag(t) {
                    return CType::Record(id);
                }
            }
            let id = self.new_record(tag.clone(), is_union);
            if let (Some(t), Some(scope)) = (tag, self.tags.last_mut()) {
                scope.insert(t, Tag::Record(id));
            }
            return CType::Record(id);
        };
        // A definition completes an incomplete declaration of the same scope, or starts a new one.
        let existing = tag
            .as_ref()
            .and_then(|t| match self.tags.last().and_then(|s| s.get(t)) {
                Some(Tag::Record(id)) if !self.prog.records[id.0 as usize].complete => Some(*id),
                _ => None,
            });
        let id = existing.unwrap_or_else(|| self.new_record(tag.clone(), is_union));
        if let (Some(t), Some(scope)) = (&tag, self.tags.last_mut()) {
            scope.insert(t.clone(), Tag::Record(id));
        }
        let text = self.node_text(node);
        let packed = text.contains("packed") && has_attribute(node, self.text, "packed");
        let aligned = has_attribute(node, self.text, "aligned");
        let mut fields: Vec<(String, CType, Option<u32>)> = Vec::new();
        let mut layout_known = !aligned;
        let mut c = body.walk();
        let field_decls: Vec<Node> = body.named_children(&mut c).collect();
        for fd in field_decls {
            if fd.kind() != "field_declaration" {
                continue;
            }
            if has_attribute(fd, self.text, "aligned") || has_attribute(fd, self.text, "packed") {
                layout_known = false;
            }
            let specs = self.specs(fd);
            let base = specs.ty.clone().unwrap_or(CType::INT);
            let mut c2 = fd.walk();
            let decls: Vec<Node> = fd.children_by_field_name("declarator", &mut c2).collect();
            let mut c3 = fd.walk();
            let bitfield = fd
                .named_children(&mut c3)
                .find(|n| n.kind() == "bitfield_clause")
                .and_then(|b| b.named_child(0))
                .map(|e| {
                    let e = self.lower_const_expr(e);
                    consteval::eval(&e).and_then(|v| u32::try_from(v).ok())
                });
            if decls.is_empty() {
                match bitfield {
                    // An unnamed bit-field pads.
                    Some(w) => fields.push((String::new(), base, Some(w.unwrap_or(0)))),
                    None => {
                        if matches!(base, CType::Record(_)) {
                            fields.push((String::new(), base, None)); // anonymous member
                        }
                    }
                }
                continue;
            }
            for d in decls {
                let declared = self.declarator(Some(d), base.clone());
                let width = match bitfield {
                    Some(Some(w)) => Some(w),
                    Some(None) => {
                        layout_known = false;
                        Some(1)
                    }
                    None => None,
                };
                fields.push((declared.name.unwrap_or_default(), declared.ty, width));
            }
        }
        let record = layout_record(&self.layout(), tag, is_union, fields, packed, layout_known);
        self.prog.records[id.0 as usize] = record;
        CType::Record(id)
    }

    fn new_record(&mut self, tag: Option<String>, is_union: bool) -> RecordId {
        self.prog.records.push(Record {
            tag,
            is_union,
            fields: Vec::new(),
            size: 0,
            align: 1,
            complete: false,
        });
        RecordId(self.prog.records.len() as u32 - 1)
    }

    fn enum_specifier(&mut self, node: Node) -> CType {
        let tag = node
            .child_by_field_name("name")
            .map(|n| self.node_text(n).to_string());
        let Some(body) = node.child_by_field_name("body") else {
            if let Some(Tag::Enum(k)) = tag.as_ref().and_then(|t| self.lookup_tag(t)) {
                return CType::Int(k);
            }
            return CType::Int(IntKind::UInt);
        };
        let mut next: i128 = 0;
        let mut values = Vec::new();
        let mut c = body.walk();
        let enumerators: Vec<Node> = body
            .named_children(&mut c)
            .filter(|n| n.kind() == "enumerator")
            .collect();
        for en in enumerators {
            let Some(name_node) = en.child_by_field_name("name") else {
                continue;
            };
            let name = self.node_text(name_node).to_string();
            if let Some(v) = en.child_by_field_name("value") {
                let e = self.lower_const_expr(v);
                match consteval::eval(&e) {
                    Some(x) => next = x,
                    None => {
                        self.fallback(
                            v,
                            FallbackKind::UnsupportedExpr,
                            "enumerator value is not constant",
                        );
                    }
                }
            }
            values.push(next);
            // Enumeration constants have type int when the value fits (C11 6.7.2.2).
            let ty = if i32::try_from(next).is_ok() {
                CType::INT
            } else {
                CType::Int(IntKind::Long)
            };
            self.declare(&name, Symbol::EnumConst(next, ty));
            next += 1;
        }
        // GCC's choice of the underlying type: unsigned int unless some value is negative.
        let min = values.iter().copied().min().unwrap_or(0);
        let max = values.iter().copied().max().unwrap_or(0);
        let kind = if min < 0 {
            if min >= i128::from(i32::MIN) && max <= i128::from(i32::MAX) {
                IntKind::Int
            } else {
                IntKind::Long
            }
        } else if max <= i128::from(u32::MAX) {
            IntKind::UInt
        } else {
            IntKind::ULong
        };
        if let (Some(t), Some(scope)) = (tag, self.tags.last_mut()) {
            scope.insert(t, Tag::Enum(kind));
        }
        CType::Int(kind)
    }
}

fn has_attribute(node: Node, text: &[u8], name: &str) -> bool {
    let mut c = node.walk();
    let found = node.children(&mut c).any(|ch| {
        (ch.kind() == "attribute_specifier" || ch.kind() == "attribute_declaration")
            && std::str::from_utf8(&text[ch.byte_range()]).is_ok_and(|s| s.contains(name))
    });
    found
}

/// Names tree-sitter-c parses as `primitive_type`, and a few GNU spellings of types.
pub(super) fn primitive_type(name: &str) -> Option<CType> {
    use IntKind::*;
    let k = match name {
        "void" => return Some(CType::Void),
        "float" => return Some(CType::Float(FloatKind::Float)),
        "double" => return Some(CType::Float(FloatKind::Double)),
        "_Float128" | "__float128" | "_Float64x" => {
            return Some(CType::Float(FloatKind::LongDouble))
        }
        "_Float32" => return Some(CType::Float(FloatKind::Float)),
        "_Float64" | "_Float32x" => return Some(CType::Float(FloatKind::Double)),
        // The x86_64 va_list is an array of one 24-byte record.
        "__builtin_va_list" | "va_list" => {
            return Some(CType::Array(Box::new(CType::Int(UChar)), Some(24)))
        }
        "char" => Char,
        "short" => Short,
        "int" | "signed" => Int,
        "unsigned" => UInt,
        "long" => Long,
        "_Bool" | "bool" => Bool,
        "size_t" | "uintptr_t" | "uint64_t" | "uintmax_t" => ULong,
        "ssize_t" | "ptrdiff_t" | "intptr_t" | "int64_t" | "intmax_t" => Long,
        "int8_t" => SChar,
        "uint8_t" => UChar,
        "int16_t" => Short,
        "uint16_t" | "char16_t" => UShort,
        "int32_t" | "wchar_t" => Int,
        "uint32_t" | "char32_t" => UInt,
        "__int128" | "__int128_t" => Int128,
        "__uint128_t" => UInt128,
        _ => return None,
    };
    Some(CType::Int(k))
}

/// System V x86_64 layout of a struct or union.
fn layout_record(
    layout: &Layout,
    tag: Option<String>,
    is_union: bool,
    fields: Vec<(String, CType, Option<u32>)>,
    packed: bool,
    mut layout_known: bool,
) -> Record {
    let mut out = Vec::new();
    let mut bit_pos: u64 = 0; // next free bit (structs)
    let mut size: u64 = 0; // bytes (unions)
    let mut align: u64 = 1;
    for (name, ty, width) in fields {
        let (Some(fsize), Some(falign)) = (layout.size_of(&ty), layout.align_of(&ty)) else {
            layout_known = false;
            out.push(Field {
                name,
                ty,
                offset: 0,
                bits: None,
            });
            continue;
        };
        let falign = if packed { 1 } else { falign.max(1) };
        match width {
            Some(w) => {
                let unit_bits = fsize * 8;
                if unit_bits == 0 {
                    layout_known = false;
                    continue;
                }
                let w = u64::from(w);
                let start = if is_union { 0 } else { bit_pos };
                if w == 0 {
                    bit_pos = start.div_ceil(unit_bits) * unit_bits;
                    continue;
                }
                let mut s = start;
                if !packed && s / unit_bits != (s + w - 1) / unit_bits {
                    s = s.div_ceil(unit_bits) * unit_bits;
                }
                let unit_start_bits = if packed {
                    s / 8 * 8
                } else {
                    s / unit_bits * unit_bits
                };
                // A packed bit-field may straddle its declared unit: the engine cannot read it
                // as one unit, so say the layout is unknown.
                if packed && (s - unit_start_bits) + w > unit_bits {
                    layout_known = false;
                }
                if !name.is_empty() {
                    align = align.max(falign);
                }
                out.push(Field {
                    name,
                    ty,
                    offset: unit_start_bits / 8,
                    bits: Some(((s - unit_start_bits) as u32, w as u32)),
                });
                if is_union {
                    size = size.max(s.div_ceil(8) + w.div_ceil(8));
                } else {
                    bit_pos = s + w;
                }
            }
            None => {
                align = align.max(falign);
                let offset = if is_union {
                    0
                } else {
                    bit_pos.div_ceil(8).div_ceil(falign) * falign
                };
                out.push(Field {
                    name,
                    ty,
                    offset,
                    bits: None,
                });
                if is_union {
                    size = size.max(fsize);
                } else {
                    bit_pos = (offset + fsize) * 8;
                }
            }
        }
    }
    let raw = if is_union { size } else { bit_pos.div_ceil(8) };
    Record {
        tag,
        is_union,
        fields: out,
        size: raw.div_ceil(align) * align,
        align,
        complete: layout_known,
    }
}
