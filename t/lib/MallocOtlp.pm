# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

package MallocOtlp;

# The OTLP requests that malloc_export pushes, read back by a protobuf
# reader of our own: the request as a Perl structure (decode_request),
# and what a receiver or the conformance checker would refuse in it.
#
# profcheck() applies the rules of open-telemetry/sig-profiling's
# profcheck (profcheck/check.go, ConformanceChecker.Check) to the
# request, a ProfilesData by another name (the same fields 1 and 2),
# with its three optional checks on: duplicates in the dictionary,
# sample shapes and orphans.  Each rule is written here again, in Perl,
# from its reading of that file; the messages follow profcheck's.
# receivers() adds what the receivers refuse besides: a string field
# that is not UTF-8 (protobuf: libprotobuf and Go refuse the request),
# a key twice in the resource (the specification's MUST; Pyroscope keeps
# the first), a profile of more than 16,000 samples (Pyroscope's
# validation.max-profile-stacktrace-samples), no service.name.

use strict;
use warnings;

use Encode ();
use Exporter qw(import);

our @EXPORT_OK = qw(varint pb_fields pb_message all one ints zero_entry
                    any_value decode_request leaf leaf_sum profcheck
                    receivers @TABLES);

our @TABLES = qw(mapping location function link string attribute stack);

# Pyroscope's default limit of samples in one profile
our $MAX_SAMPLES = 16000;

###########################################################################
# protobuf, as much as the request needs: varints, fixed64 and fixed32,
# length-delimited bytes

sub varint {
    my ($buf, $pos) = @_;
    my ($v, $shift) = (0, 0);
    while (1) {
        die "truncated varint\n" if $$pos >= length $buf;
        my $b = ord substr($buf, $$pos++, 1);
        $v |= ($b & 0x7f) << $shift;
        return $v unless $b & 0x80;
        $shift += 7;
        die "varint too long\n" if $shift > 63;
    }
}

# [number, wire type, value] of each field, in order
sub pb_fields {
    my ($buf) = @_;
    my ($pos, @f) = (0);
    while ($pos < length $buf) {
        my $key = varint($buf, \$pos);
        my ($num, $wire, $v) = ($key >> 3, $key & 7);
        if ($wire == 0) {
            $v = varint($buf, \$pos);
        } elsif ($wire == 1) {
            $v = unpack 'Q<', substr($buf, $pos, 8);
            $pos += 8;
        } elsif ($wire == 2) {
            my $len = varint($buf, \$pos);
            $v = substr($buf, $pos, $len);
            $pos += $len;
        } elsif ($wire == 5) {
            $v = unpack 'V', substr($buf, $pos, 4);
            $pos += 4;
        } else {
            die "wire type $wire at byte $pos\n";
        }
        die "field $num runs past its message\n" if $pos > length $buf;
        push @f, [$num, $wire, $v];
    }
    return @f;
}

# {number => [[wire, value], ...]}
sub pb_message {
    my ($buf) = @_;
    my %m;
    push @{$m{$_->[0]}}, [$_->[1], $_->[2]] for pb_fields($buf // '');
    return \%m;
}

sub all { my ($m, $num) = @_; return map { $_->[1] } @{$m->{$num} // []} }
sub one { my ($m, $num) = @_; return (all($m, $num))[-1] }

# a repeated number, packed or not
sub ints {
    my ($m, $num) = @_;
    my @v;
    for my $f (@{$m->{$num} // []}) {
        my ($wire, $v) = @$f;
        if ($wire != 2) {
            push @v, $v;
            next;
        }
        my $pos = 0;
        push @v, varint($v, \$pos) while $pos < length $v;
    }
    return @v;
}

# the zero value: every field 0 or zero bytes
sub zero_entry {
    my ($buf) = @_;
    return 0 unless defined $buf;
    for my $f (pb_fields($buf)) {
        my (undef, $wire, $v) = @$f;
        return 0 if $wire == 2 ? $v =~ /[^\0]/ : $v != 0;
    }
    return 1;
}

# AnyValue: {s => string_value} or {i => int_value}
sub any_value {
    my $m = pb_message($_[0]);
    return { s => one($m, 1) } if defined one($m, 1);
    return { i => unpack 'q', pack 'Q', one($m, 3) } if defined one($m, 3);
    return {};
}

# ExportProfilesServiceRequest, as the tests look at it
sub decode_request {
    my ($body) = @_;
    my $req = pb_message($body);
    my @rp = all($req, 1);
    my $rp = pb_message($rp[0]);
    my $sp = pb_message(one($rp, 2));
    my $scope = pb_message(one($sp, 1));

    my $d = pb_message(one($req, 2));
    my %dict = map { $TABLES[$_ - 1] => [all($d, $_)] } 1 .. 7;
    my $s = $dict{string};

    my %resource;
    for my $kv (all(pb_message(one($rp, 1)), 1)) {
        my $m = pb_message($kv);
        $resource{one($m, 1)} = any_value(one($m, 2));
    }

    my $type = sub {
        my $vt = pb_message($_[0]);
        return ($s->[one($vt, 1) // 0] // '?') . '/'
             . ($s->[one($vt, 2) // 0] // '?');
    };

    my @profiles;
    for my $buf (all($sp, 2)) {
        my $p = pb_message($buf);
        my %attr;
        for my $i (ints($p, 11)) {
            my $kv = pb_message($dict{attribute}[$i]);
            $attr{$s->[one($kv, 1) // 0] // '?'} = any_value(one($kv, 2));
        }
        push @profiles, {
            type => join(',', map { $type->($_) } all($p, 1)),
            period_type => $type->(one($p, 5)),
            period => one($p, 6),
            time => one($p, 3),
            duration => one($p, 4) // 0,
            attr => \%attr,
            samples => [map {
                my $m = pb_message($_);
                [one($m, 1) // 0, [ints($m, 4)]];
            } all($p, 2)],
        };
    }

    return { resource_profiles => scalar @rp, resource => \%resource,
             scope => { name => one($scope, 1), version => one($scope, 2) },
             profiles => \@profiles, dict => \%dict };
}

# the name of the function at the leaf of stack $i (location_indices[0])
sub leaf {
    my ($o, $i) = @_;
    my $d = $o->{dict};
    my ($loc) = ints(pb_message($d->{stack}[$i]), 1);
    return '' unless $loc;
    my ($line) = all(pb_message($d->{location}[$loc]), 3);
    my $fn = pb_message($d->{function}[one(pb_message($line), 1) // 0]);
    return $d->{string}[one($fn, 1) // 0] // '';
}

# what the stacks whose leaf is $func have, in the profile of $type
sub leaf_sum {
    my ($o, $type, $func) = @_;
    my ($p) = grep { $_->{type} eq $type } @{$o->{profiles}};
    my $sum = 0;
    for my $s (@{$p ? $p->{samples} : []}) {
        $sum += $s->[1][0] // 0 if leaf($o, $s->[0]) eq $func;
    }
    return $sum;
}

###########################################################################
# the request read as the .proto files say (opentelemetry-proto: the
# collector's profiles_service.proto, profiles.proto, common.proto,
# resource.proto): every field by its type, defaults where a field is
# absent, as Go's generated code gives them to profcheck

# number => [name, type, repeated]; a type in %SCHEMA is a message
my %SCHEMA = (
    Request => {
        1 => ['resource_profiles', 'ResourceProfiles', 1],
        2 => ['dictionary', 'ProfilesDictionary', 0] },
    ResourceProfiles => {
        1 => ['resource', 'Resource', 0],
        2 => ['scope_profiles', 'ScopeProfiles', 1],
        3 => ['schema_url', 'string', 0] },
    Resource => {
        1 => ['attributes', 'KeyValue', 1],
        2 => ['dropped_attributes_count', 'uint32', 0],
        3 => ['entity_refs', 'EntityRef', 1] },
    EntityRef => {
        1 => ['schema_url', 'string', 0],
        2 => ['type', 'string', 0],
        3 => ['id_keys', 'string', 1],
        4 => ['description_keys', 'string', 1] },
    KeyValue => {
        1 => ['key', 'string', 0],
        2 => ['value', 'AnyValue', 0],
        3 => ['key_strindex', 'int32', 0] },
    AnyValue => {
        1 => ['string_value', 'string', 0],
        2 => ['bool_value', 'bool', 0],
        3 => ['int_value', 'int64', 0],
        4 => ['double_value', 'double', 0],
        5 => ['array_value', 'ArrayValue', 0],
        6 => ['kvlist_value', 'KeyValueList', 0],
        7 => ['bytes_value', 'bytes', 0],
        8 => ['string_value_strindex', 'int32', 0] },
    ArrayValue => { 1 => ['values', 'AnyValue', 1] },
    KeyValueList => { 1 => ['values', 'KeyValue', 1] },
    InstrumentationScope => {
        1 => ['name', 'string', 0],
        2 => ['version', 'string', 0],
        3 => ['attributes', 'KeyValue', 1],
        4 => ['dropped_attributes_count', 'uint32', 0] },
    ScopeProfiles => {
        1 => ['scope', 'InstrumentationScope', 0],
        2 => ['profiles', 'Profile', 1],
        3 => ['schema_url', 'string', 0] },
    Profile => {
        1 => ['sample_type', 'ValueType', 0],
        2 => ['samples', 'Sample', 1],
        3 => ['time_unix_nano', 'fixed64', 0],
        4 => ['duration_nano', 'uint64', 0],
        5 => ['period_type', 'ValueType', 0],
        6 => ['period', 'int64', 0],
        7 => ['profile_id', 'bytes', 0],
        8 => ['dropped_attributes_count', 'uint32', 0],
        9 => ['original_payload_format', 'string', 0],
        10 => ['original_payload', 'bytes', 0],
        11 => ['attribute_indices', 'int32', 1] },
    ValueType => {
        1 => ['type_strindex', 'int32', 0],
        2 => ['unit_strindex', 'int32', 0] },
    Sample => {
        1 => ['stack_index', 'int32', 0],
        2 => ['attribute_indices', 'int32', 1],
        3 => ['link_index', 'int32', 0],
        4 => ['values', 'int64', 1],
        5 => ['timestamps_unix_nano', 'fixed64', 1] },
    ProfilesDictionary => {
        1 => ['mapping_table', 'Mapping', 1],
        2 => ['location_table', 'Location', 1],
        3 => ['function_table', 'Function', 1],
        4 => ['link_table', 'Link', 1],
        5 => ['string_table', 'string', 1],
        6 => ['attribute_table', 'KeyValueAndUnit', 1],
        7 => ['stack_table', 'Stack', 1] },
    Mapping => {
        1 => ['memory_start', 'uint64', 0],
        2 => ['memory_limit', 'uint64', 0],
        3 => ['file_offset', 'uint64', 0],
        4 => ['filename_strindex', 'int32', 0],
        5 => ['attribute_indices', 'int32', 1] },
    Stack => { 1 => ['location_indices', 'int32', 1] },
    Location => {
        1 => ['mapping_index', 'int32', 0],
        2 => ['address', 'uint64', 0],
        3 => ['lines', 'Line', 1],
        4 => ['attribute_indices', 'int32', 1] },
    Line => {
        1 => ['function_index', 'int32', 0],
        2 => ['line', 'int64', 0],
        3 => ['column', 'int64', 0] },
    Function => {
        1 => ['name_strindex', 'int32', 0],
        2 => ['system_name_strindex', 'int32', 0],
        3 => ['filename_strindex', 'int32', 0],
        4 => ['start_line', 'int64', 0] },
    Link => {
        1 => ['trace_id', 'bytes', 0],
        2 => ['span_id', 'bytes', 0] },
    KeyValueAndUnit => {
        1 => ['key_strindex', 'int32', 0],
        2 => ['value', 'AnyValue', 0],
        3 => ['unit_strindex', 'int32', 0] },
);

my %WIRE = (int32 => 0, int64 => 0, uint32 => 0, uint64 => 0, bool => 0,
            fixed64 => 1, double => 1, string => 2, bytes => 2);

sub signed { return unpack 'q', pack 'Q', $_[0] }

# one scalar of $type from a field's value
sub scalar_of {
    my ($type, $v, $where, $cx) = @_;
    if ($type eq 'int32') {
        $v = signed($v);
        die "$where: $v is not an int32\n"
            if $v < -2**31 || $v >= 2**31;
        return $v;
    }
    return signed($v) if $type eq 'int64';
    return $v & 0xffffffff if $type eq 'uint32';
    return $v ? 1 : 0 if $type eq 'bool';
    return unpack 'd<', pack 'Q<', $v if $type eq 'double';
    if ($type eq 'string') {
        my $copy = $v;
        push @{$cx->{not_utf8}}, $where
            unless eval { Encode::decode('UTF-8', $copy,
                                         Encode::FB_CROAK); 1 };
    }
    return $v;
}

# message $type from $buf: {field name => value}; $where names it
sub decode_msg {
    my ($type, $buf, $cx, $where) = @_;
    my $schema = $SCHEMA{$type} or die "no message $type\n";
    my %m = (_present => {});
    for my $def (values %$schema) {
        my ($name, $t, $rep) = @$def;
        $m{$name} = $rep ? [] : $SCHEMA{$t} ? undef
                  : ($t eq 'string' || $t eq 'bytes') ? '' : 0;
    }
    for my $f (pb_fields($buf)) {
        my ($num, $wire, $v) = @$f;
        my $def = $schema->{$num};
        if (!$def) {
            push @{$m{_unknown}}, $num;
            next;
        }
        my ($name, $t, $rep) = @$def;
        my $at = "$where.$name";
        $m{_present}{$name} = 1;
        if ($SCHEMA{$t}) {
            die "$at: wire type $wire, not a message\n" if $wire != 2;
            my $sub = decode_msg($t, $v, $cx,
                                 $rep ? "$at\[" . @{$m{$name}} . ']' : $at);
            if ($rep) {
                push @{$m{$name}}, $sub;
            } else {
                $m{$name} = $sub;
            }
            next;
        }
        my @v;
        if ($wire == $WIRE{$t}) {
            @v = ($v);
        } elsif ($rep && $wire == 2 && $WIRE{$t} != 2) {
            # packed
            my $pos = 0;
            while ($pos < length $v) {
                if ($WIRE{$t} == 0) {
                    push @v, varint($v, \$pos);
                } else {
                    die "$at: a packed fixed64 cut short\n"
                        if $pos + 8 > length $v;
                    push @v, unpack 'Q<', substr($v, $pos, 8);
                    $pos += 8;
                }
            }
        } else {
            die "$at: wire type $wire for a $t\n";
        }
        @v = map { scalar_of($t, $_, $at, $cx) } @v;
        if ($rep) {
            push @{$m{$name}}, @v;
        } else {
            $m{$name} = $v[-1];
        }
    }
    return \%m;
}

# what Go's proto.Equal(m, new(T)) says: every field at its default
sub is_zero {
    my ($type, $m) = @_;
    return 0 if !defined $m || $m->{_unknown};
    for my $def (values %{$SCHEMA{$type}}) {
        my ($name, $t, $rep) = @$def;
        my $v = $m->{$name};
        if ($rep) {
            return 0 if @$v;
        } elsif ($SCHEMA{$t}) {
            return 0 if defined $v;
        } else {
            return 0 if ($t eq 'string' || $t eq 'bytes') ? $v ne '' : $v;
        }
    }
    return 1;
}

###########################################################################
# profcheck's rules

sub in_range {
    my ($len, $idx) = @_;
    return $idx < 0 || $idx >= $len
        ? "index $idx is out of range [0..$len)" : undef;
}

# checkAttributeIndices: each in range, its key in range, no key twice
sub attribute_indices {
    my ($d, $indices, $where) = @_;
    my (@e, %keys);
    my $pos = 0;
    for my $i (@$indices) {
        my $err = in_range(scalar @{$d->{attribute_table}}, $i);
        if ($err) {
            push @e, "$where\[$pos]: $err";
        } else {
            my $key_i = $d->{attribute_table}[$i]{key_strindex};
            $err = in_range(scalar @{$d->{string_table}}, $key_i);
            if ($err) {
                push @e, "$where\[$pos].key_strindex: $err";
            } else {
                my $key = $d->{string_table}[$key_i];
                if (exists $keys{$key}) {
                    push @e, "$where\[$pos].key_strindex: duplicate key "
                        . "\"$key\", previously seen at "
                        . "[$keys{$key}].key_strindex";
                } else {
                    $keys{$key} = $pos;
                }
            }
        }
        $pos++;
    }
    return @e;
}

sub value_type {
    my ($d, $vt, $where) = @_;
    my $n = @{$d->{string_table}};
    my @e;
    for my $f (qw(unit_strindex type_strindex)) {
        my $err = in_range($n, $vt ? $vt->{$f} : 0);
        push @e, "$where.$f: $err" if $err;
    }
    return @e;
}

sub check_profile {
    my ($d, $p, $where) = @_;
    my @e = (attribute_indices($d, $p->{attribute_indices},
                               "$where: attribute_indices"),
             value_type($d, $p->{sample_type}, "$where: sample_type"),
             value_type($d, $p->{period_type}, "$where: period_type"));
    my $start = $p->{time_unix_nano};
    my $end = $start + $p->{duration_nano};
    my $expected = '';
    my $i = 0;
    for my $s (@{$p->{samples}}) {
        my $at = "$where: sample[$i]";
        $i++;
        my $err = in_range(scalar @{$d->{stack_table}}, $s->{stack_index});
        push @e, "$at: stack_index: $err" if $err;
        push @e, attribute_indices($d, $s->{attribute_indices},
                                   "$at: attribute_indices");
        $err = in_range(scalar @{$d->{link_table}}, $s->{link_index});
        push @e, "$at: link_index: $err" if $err;
        my $k = 0;
        for my $ts (@{$s->{timestamps_unix_nano}}) {
            push @e, "$at: timestamps_unix_nano[$k]=$ts is outside the "
                . "profile's time range [$start, $end)"
                if $ts < $start || $ts >= $end;
            $k++;
        }

        # CheckSampleTimestampShape
        my ($nv, $nt) = (scalar @{$s->{values}},
                         scalar @{$s->{timestamps_unix_nano}});
        my $shape;
        if ($nv && $nt) {
            push @e, "$at: values (len=$nv) and timestamps_unix_nano "
                . "(len=$nt) must contain the same number of elements"
                if $nv != $nt;
            $shape = 'both_values_and_timestamps';
        } elsif ($nv) {
            push @e, "$at: values (len=$nv) must contain a single element "
                . "if timestamps_unix_nano is not set" if $nv != 1;
            $shape = 'values_only';
        } elsif ($nt) {
            $shape = 'timestamps_only';
        } else {
            push @e, "$at: sample must have at least one values or "
                . "timestamps_unix_nano entry";
            $shape = 'invalid';
        }
        if ($expected eq '') {
            $expected = $shape;
        } elsif ($shape ne $expected) {
            push @e, "$at: sample shape $shape does not match expected "
                . "sample shape $expected";
        }
    }
    return @e;
}

# checkZeroVal, and KeyValueAndUnit's own (checkAttributeTableZeroVal)
sub zero_val {
    my ($type, $table, $where) = @_;
    return "$where: empty table, must have at least zero value entry"
        unless @$table;
    if ($type eq 'KeyValueAndUnit') {
        my $first = $table->[0];
        return "$where: first attribute must have zero key/unit indices"
            if $first->{key_strindex} || $first->{unit_strindex};
        my $v = $first->{value};

        # an AnyValue whose oneof is not set: no field on the wire
        return "$where: first attribute value must be nil"
            if $v && %{$v->{_present}};
        return ();
    }
    return "$where: must have zero value at index 0"
        unless is_zero($type, $table->[0]);
    return ();
}

sub check_dictionary {
    my ($d) = @_;
    my $nstr = @{$d->{string_table}};
    my @e;

    my $m = $d->{mapping_table};
    push @e, zero_val('Mapping', $m, 'dictionary: mapping_table');
    my %uniq;
    for my $i (1 .. $#$m) {
        my $at = "dictionary: mapping_table: [" . ($i - 1) . "]";
        my $x = $m->[$i];
        my $err = in_range($nstr, $x->{filename_strindex});
        push @e, "$at.filename_strindex: $err" if $err;
        push @e, attribute_indices($d, $x->{attribute_indices},
                                   "$at.attribute_indices");
        push @e, "$at: memory_start, memory_limit: must be both zero or "
            . "start < limit"
            if ($x->{memory_start} || $x->{memory_limit})
               && !($x->{memory_start} < $x->{memory_limit});
        my $key = join ',', $x->{filename_strindex},
            join(' ', sort { $a <=> $b } @{$x->{attribute_indices}}),
            $x->{memory_start}, $x->{memory_limit}, $x->{file_offset};
        push @e, "$at: duplicate mapping ($key)" if $uniq{$key}++;
    }

    my $l = $d->{location_table};
    push @e, zero_val('Location', $l, 'dictionary: location_table');
    for my $i (0 .. $#$l) {
        my $at = "dictionary: location_table: [$i]";
        my $err = in_range(scalar @$m, $l->[$i]{mapping_index});
        push @e, "$at.mapping_index: $err" if $err;
        push @e, attribute_indices($d, $l->[$i]{attribute_indices},
                                   "$at.attribute_indices");
        my $k = 0;
        for my $line (@{$l->[$i]{lines}}) {
            $err = in_range(scalar @{$d->{function_table}},
                            $line->{function_index});
            push @e, "$at.line[$k]: function_index: $err" if $err;
            push @e, "$at.line[$k]: line: must be non-negative"
                if $line->{line} < 0;
            push @e, "$at.line[$k]: column: must be non-negative"
                if $line->{column} < 0;
            $k++;
        }
    }

    my $f = $d->{function_table};
    push @e, zero_val('Function', $f, 'dictionary: function_table');
    for my $i (0 .. $#$f) {
        my $at = "dictionary: function_table: [$i]";
        for my $s (qw(name_strindex system_name_strindex
                      filename_strindex)) {
            my $err = in_range($nstr, $f->[$i]{$s});
            push @e, "$at.$s: $err" if $err;
        }
        push @e, "$at.start_line: must be non-negative"
            if $f->[$i]{start_line} < 0;
    }

    my $k = $d->{link_table};
    push @e, zero_val('Link', $k, 'dictionary: link_table');
    for my $i (1 .. $#$k) {
        my $at = "dictionary: link_table: [" . ($i - 1) . "]";
        push @e, "$at: len(trace_id) == " . length($k->[$i]{trace_id})
            . ", want 16" if length $k->[$i]{trace_id} != 16;
        push @e, "$at: len(span_id) == " . length($k->[$i]{span_id})
            . ", want 8" if length $k->[$i]{span_id} != 8;
    }

    my $s = $d->{string_table};
    if (!@$s) {
        push @e, 'dictionary: string_table: empty string table, must '
            . 'have at least empty string';
    } elsif ($s->[0] ne '') {
        push @e, "dictionary: string_table: must have empty string at "
            . "index 0, got \"$s->[0]\"";
    } else {
        my %seen;
        for my $i (0 .. $#$s) {
            push @e, "dictionary: string_table: duplicate string at index "
                . "$i, orig index $seen{$s->[$i]}: $s->[$i]"
                if exists $seen{$s->[$i]};
            $seen{$s->[$i]} //= $i;
        }
    }

    my $a = $d->{attribute_table};
    push @e, zero_val('KeyValueAndUnit', $a, 'dictionary: attribute_table');
    for my $i (0 .. $#$a) {
        for my $x (qw(key_strindex unit_strindex)) {
            my $err = in_range($nstr, $a->[$i]{$x});
            push @e, "dictionary: attribute_table: [$i].$x: $err" if $err;
        }
    }

    my $st = $d->{stack_table};
    push @e, zero_val('Stack', $st, 'dictionary: stack_table');
    for my $i (0 .. $#$st) {
        my $j = 0;
        for my $loc (@{$st->[$i]{location_indices}}) {
            my $err = in_range(scalar @$l, $loc);
            push @e, "dictionary: stack_table: [$i].location_indices[$j]: "
                . $err if $err;
            $j++;
        }
    }

    return @e;
}

# checkDictionaryOrphans: every entry of every table referred to
sub orphans {
    my ($req, $d) = @_;
    my %ref = map { $_ => { 0 => 1 } }
        qw(string attribute mapping function location stack link);

    for my $rp (@{$req->{resource_profiles}}) {
        for my $sp (@{$rp->{scope_profiles}}) {
            for my $p (@{$sp->{profiles}}) {
                for my $vt ($p->{sample_type}, $p->{period_type}) {
                    $ref{string}{$vt ? $vt->{$_} : 0} = 1
                        for qw(type_strindex unit_strindex);
                }
                $ref{attribute}{$_} = 1 for @{$p->{attribute_indices}};
                for my $s (@{$p->{samples}}) {
                    $ref{stack}{$s->{stack_index}} = 1;
                    $ref{link}{$s->{link_index}} = 1;
                    $ref{attribute}{$_} = 1 for @{$s->{attribute_indices}};
                }
            }
        }
    }
    for my $st (@{$d->{stack_table}}) {
        $ref{location}{$_} = 1 for @{$st->{location_indices}};
    }
    for my $loc (@{$d->{location_table}}) {
        $ref{mapping}{$loc->{mapping_index}} = 1;
        $ref{attribute}{$_} = 1 for @{$loc->{attribute_indices}};
        $ref{function}{$_->{function_index}} = 1 for @{$loc->{lines}};
    }
    for my $m (@{$d->{mapping_table}}) {
        $ref{string}{$m->{filename_strindex}} = 1;
        $ref{attribute}{$_} = 1 for @{$m->{attribute_indices}};
    }
    for my $f (@{$d->{function_table}}) {
        $ref{string}{$f->{$_}} = 1
            for qw(name_strindex system_name_strindex filename_strindex);
    }
    for my $kv (@{$d->{attribute_table}}) {
        $ref{string}{$kv->{$_}} = 1 for qw(key_strindex unit_strindex);
    }

    my @e;
    for my $t (qw(string attribute mapping function location stack link)) {
        my $table = $d->{"${t}_table"};
        for my $i (0 .. $#$table) {
            push @e, "dictionary: ${t}_table: unreferenced entry at index $i"
                unless $ref{$t}{$i};
        }
    }
    return @e;
}

# the request as profcheck would read it: ([violation, ...], request)
sub read_checked {
    my ($body) = @_;
    my %cx = (not_utf8 => []);
    my $req = eval { decode_msg('Request', $body, \%cx, 'request') };
    return (["not a request: $@"], undef, \%cx) unless $req;
    $req->{dictionary} //= decode_msg('ProfilesDictionary', '', \%cx, '');
    return ([], $req, \%cx);
}

# profcheck's violations in a request; none: ()
sub profcheck {
    my ($body) = @_;
    my ($e, $req) = read_checked($body);
    return @$e unless $req;
    my $d = $req->{dictionary};
    my @e;

    push @e, 'resource profiles are empty'
        unless @{$req->{resource_profiles}};
    my $i = 0;
    for my $rp (@{$req->{resource_profiles}}) {
        my $at = "resource_profiles[$i]";
        push @e, "$at: resource profiles has no scope profiles"
            unless @{$rp->{scope_profiles}};
        my $j = 0;
        for my $sp (@{$rp->{scope_profiles}}) {
            push @e, "$at: scope_profiles[$j]: scope profiles has no "
                . "profiles" unless @{$sp->{profiles}};
            my $k = 0;
            for my $p (@{$sp->{profiles}}) {
                push @e, check_profile($d, $p,
                                       "$at: scope_profiles[$j]: "
                                       . "profile[$k]");
                $k++;
            }
            $j++;
        }
        $i++;
    }
    push @e, check_dictionary($d);
    push @e, orphans($req, $d);
    return @e;
}

# what receivers refuse besides profcheck; none: ()
sub receivers {
    my ($body) = @_;
    my ($e, $req, $cx) = read_checked($body);
    return @$e unless $req;
    my @e = map { "$_: a string that is not UTF-8" } @{$cx->{not_utf8}};
    my $i = 0;
    for my $rp (@{$req->{resource_profiles}}) {
        my %seen;
        for my $kv (@{$rp->{resource} ? $rp->{resource}{attributes} : []}) {
            push @e, "resource_profiles[$i]: resource: the key "
                . "\"$kv->{key}\" twice" if $seen{$kv->{key}}++;
        }
        push @e, "resource_profiles[$i]: resource: no service.name"
            unless $seen{'service.name'};
        for my $sp (@{$rp->{scope_profiles}}) {
            for my $p (@{$sp->{profiles}}) {
                my $n = @{$p->{samples}};
                push @e, "resource_profiles[$i]: a profile of $n samples, "
                    . "more than Pyroscope's $MAX_SAMPLES"
                    if $n > $MAX_SAMPLES;
            }
        }
        $i++;
    }
    return @e;
}

1;
